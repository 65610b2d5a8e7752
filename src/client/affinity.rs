//! One CPU for a sequential dialogue and the reference server it started.
//!
//! A turn over stdio is a strict ping-pong: the client writes a Request and waits, the server
//! answers and waits. When the two processes sit on different CPUs, every hand-over is a
//! wake-up across CPUs; on a virtual machine that is an inter-processor interrupt through the
//! hypervisor, and it was most of a turn's cost (a 2 KB ping-pong over pipes: 44–79 µs of CPU
//! across two vCPUs, 5 µs on one, in `benches/turns`). Nothing runs in parallel in such a dialogue, so nothing
//! is lost by keeping both on the CPU the client is on.
//!
//! Only the two threads that take turns are placed: the client's runtime thread (a
//! current-thread runtime) and the server's main thread (`serve` runs a current-thread
//! runtime on it). Threads that already run elsewhere (both sides compile their schemas on a
//! thread of their own at start) keep their places. The client's thread gets its CPUs back
//! when the connection ends, so that a server started after it (another one the user named)
//! is not born on one CPU: a child takes the affinity of the thread that starts it.

/// The client's thread placed on one CPU with a server, until this is dropped.
#[derive(Debug)]
pub struct SharedCpu {
    pub cpu: usize,
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    thread: libc::pid_t,
}

/// The CPUs each placed thread had before its first `SharedCpu`, and how many are alive: a
/// scenario step that opens a new session makes the next connection before it closes the
/// last, and the thread gets its CPUs back only when the last of them ends.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static PLACED: std::sync::Mutex<Vec<Placed>> = std::sync::Mutex::new(Vec::new());

#[cfg(all(target_os = "linux", target_env = "gnu"))]
struct Placed {
    thread: libc::pid_t,
    cpus: libc::cpu_set_t,
    alive: usize,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
const SET_SIZE: usize = std::mem::size_of::<libc::cpu_set_t>();

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl SharedCpu {
    /// Places the calling thread and the main thread of process `pid` on the CPU the calling
    /// thread runs on now.
    pub fn with(pid: u32) -> std::io::Result<SharedCpu> {
        let mut placed = PLACED.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `gettid` and `sched_getcpu` have no preconditions; a zeroed `cpu_set_t` is
        // an empty set; every set passed is a valid `cpu_set_t` of SET_SIZE bytes; pid 0 is
        // the calling thread, and a process's id is the id of its main thread.
        unsafe {
            let thread = libc::gettid();
            let mut cpus: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, SET_SIZE, &mut cpus) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let cpu = libc::sched_getcpu();
            if cpu < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut one);
            if libc::sched_setaffinity(pid as libc::pid_t, SET_SIZE, &one) != 0
                || libc::sched_setaffinity(0, SET_SIZE, &one) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            match placed.iter_mut().find(|p| p.thread == thread) {
                Some(p) => p.alive += 1,
                None => placed.push(Placed {
                    thread,
                    cpus,
                    alive: 1,
                }),
            }
            Ok(SharedCpu {
                cpu: cpu as usize,
                thread,
            })
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl Drop for SharedCpu {
    fn drop(&mut self) {
        let mut placed = PLACED.lock().unwrap_or_else(|p| p.into_inner());
        let Some(i) = placed.iter().position(|p| p.thread == self.thread) else {
            return;
        };
        placed[i].alive -= 1;
        if placed[i].alive == 0 {
            let p = placed.swap_remove(i);
            // SAFETY: the set is the valid one read before the first placing, for a thread
            // of this process.
            unsafe {
                libc::sched_setaffinity(p.thread, SET_SIZE, &p.cpus);
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
impl SharedCpu {
    pub fn with(_pid: u32) -> std::io::Result<SharedCpu> {
        Err(std::io::Error::other("not supported on this system"))
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// The CPUs a thread (or a process's main thread) may run on, from /proc.
    fn allowed(path: &str) -> String {
        let status = std::fs::read_to_string(path).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_owned()
    }

    #[test]
    fn both_threads_share_one_cpu_until_the_guard_is_dropped() {
        let mut child = std::process::Command::new("sleep")
            .arg("10")
            .spawn()
            .unwrap();
        let pid = child.id();
        // On a thread of its own, so that the test harness's thread keeps its CPUs whatever
        // happens.
        std::thread::spawn(move || {
            let me = format!("/proc/self/task/{}/status", unsafe { libc::gettid() });
            let before = allowed(&me);
            let shared = SharedCpu::with(pid).unwrap();
            let cpu = shared.cpu.to_string();
            assert_eq!(allowed(&me), cpu);
            assert_eq!(allowed(&format!("/proc/{pid}/status")), cpu);
            drop(shared);
            assert_eq!(allowed(&me), before, "the thread gets its CPUs back");
            // A new session's connection is made before the last one is closed: the thread
            // stays placed until both have ended, whichever ends first.
            let first = SharedCpu::with(pid).unwrap();
            let second = SharedCpu::with(pid).unwrap();
            assert_eq!(second.cpu, first.cpu);
            drop(first);
            assert_eq!(allowed(&me), second.cpu.to_string());
            drop(second);
            assert_eq!(allowed(&me), before, "the CPUs it had before the first");
        })
        .join()
        .unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}
