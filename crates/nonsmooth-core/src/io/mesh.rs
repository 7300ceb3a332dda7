//! Triangle-mesh files (STL, OBJ) for mesh colliders.
