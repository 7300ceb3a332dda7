//! nonsmooth-sim
