//! The symmetric matrix `A` of the regularized contact problem in compressed sparse
//! column form.

/// A full symmetric matrix in compressed sparse column form, rows sorted within columns.
#[derive(Debug, Clone)]
pub(crate) struct Csc {
    pub(crate) ptr: Vec<usize>,
    pub(crate) idx: Vec<usize>,
    pub(crate) val: Vec<f64>,
}

impl Csc {
    pub(crate) fn from_triplets(n: usize, t: &[(usize, usize, f64)]) -> Self {
        let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for &(i, j, x) in t {
            cols[j].push((i, x));
        }
        let mut ptr = Vec::with_capacity(n + 1);
        let mut idx = Vec::new();
        let mut val = Vec::new();
        ptr.push(0);
        for col in &mut cols {
            col.sort_unstable_by_key(|e| e.0);
            let start = idx.len();
            for &(i, x) in col.iter() {
                if idx.len() > start && idx[idx.len() - 1] == i {
                    let last = val.len() - 1;
                    val[last] += x;
                } else {
                    idx.push(i);
                    val.push(x);
                }
            }
            ptr.push(idx.len());
        }
        Self { ptr, idx, val }
    }

    pub(crate) fn get(&self, i: usize, j: usize) -> f64 {
        let col = &self.idx[self.ptr[j]..self.ptr[j + 1]];
        match col.binary_search(&i) {
            Ok(p) => self.val[self.ptr[j] + p],
            Err(_) => 0.0,
        }
    }

    /// `y = A x`.
    pub(crate) fn mul_into(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for (j, &xj) in x.iter().enumerate() {
            if xj == 0.0 {
                continue;
            }
            for k in self.ptr[j]..self.ptr[j + 1] {
                y[self.idx[k]] += self.val[k] * xj;
            }
        }
    }
}
