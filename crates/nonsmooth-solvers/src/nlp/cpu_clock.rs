//! A CPU clock for NLP solves: the calling thread's CPU time plus the CPU time of the work it
//! handed to a thread pool, so that solve times do not depend on other processes sharing the
//! machine.

use std::os::raw::c_int;
use std::time::Instant;

/// CPU seconds consumed so far by the calling thread, plus the CPU time of the work it
/// handed to a thread pool on its behalf ([`add_offloaded_cpu`]). IPOPT with sequential MUMPS runs in the calling thread, so differences of
/// this clock are the CPU time of a solve on all threads, insensitive to other processes
/// sharing the machine.
pub fn thread_cpu_seconds() -> f64 {
    own_thread_cpu_seconds() + OFFLOADED_CPU.with(|c| c.get())
}

thread_local! {
    /// CPU seconds of thread-pool work done on behalf of this thread.
    static OFFLOADED_CPU: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Charges `seconds` of CPU time spent on other threads for the calling thread's work to the
/// calling thread's [`thread_cpu_seconds`].
pub fn add_offloaded_cpu(seconds: f64) {
    OFFLOADED_CPU.with(|c| c.set(c.get() + seconds));
}

/// CPU seconds consumed so far by the calling thread alone (POSIX
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on Linux; elsewhere wall-clock seconds since the
/// first call).
pub fn own_thread_cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            tv_sec: i64,
            tv_nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: c_int, tp: *mut Timespec) -> c_int;
        }
        const CLOCK_THREAD_CPUTIME_ID: c_int = 3;
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec for the duration of the call.
        if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64()
}
