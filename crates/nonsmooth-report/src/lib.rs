//! nonsmooth-report
