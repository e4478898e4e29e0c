//! What a worker thread sets on itself before it builds its buffers: its
//! I/O priority (fio's `prioclass`/`prio`), the priority a share of its
//! commands carry (fio's `cmdprio_percentage`/`cmdprio_class`), the CPUs
//! of the NUMA nodes it may run on (`numa_cpu_nodes`) and its memory
//! policy (`numa_mem_policy`). Parsing is strict (a bad value is one line
//! saying what to write); the calls are raw syscalls, because the kernel's
//! answer (EPERM for the realtime class, EINVAL for a node it has not) is
//! what the user must hear, and because glibc has no ioprio_set wrapper.

use std::io;

/// The kernel's I/O priority classes (`IOPRIO_CLASS_*`).
pub const CLASS_RT: u8 = 1;
pub const CLASS_BE: u8 = 2;
pub const CLASS_IDLE: u8 = 3;

/// `IOPRIO_WHO_PROCESS`: the `who` of ioprio_set/get; with a thread id it
/// names that one thread.
const IOPRIO_WHO_PROCESS: libc::c_int = 1;
/// Bits the class is shifted by in an ioprio value.
const IOPRIO_CLASS_SHIFT: u16 = 13;

/// One I/O priority: a class (1 realtime, 2 best-effort, 3 idle) and a
/// level (0, the highest, to 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoPrio {
    pub class: u8,
    pub level: u8,
}

impl IoPrio {
    /// The value the kernel takes (ioprio_set, an SQE's `ioprio`):
    /// `class << 13 | level`, as fio logs it with `log_prio=1`.
    pub fn value(self) -> u16 {
        (u16::from(self.class) << IOPRIO_CLASS_SHIFT) | u16::from(self.level)
    }

    /// fio's name for the class.
    pub fn class_name(self) -> &'static str {
        match self.class {
            CLASS_RT => "rt",
            CLASS_BE => "be",
            _ => "idle",
        }
    }

    /// `CLASS[,LEVEL]`: the class as a number (1-3, fio's prioclass) or a
    /// name (rt, be, idle), the level 0-7 (default 0, as fio's `prio`).
    pub fn parse(text: &str) -> Result<IoPrio, String> {
        let t = text.trim();
        let (class, level) = match t.split_once(',') {
            Some((c, l)) => (c.trim(), Some(l.trim())),
            None => (t, None),
        };
        let class = match class {
            "1" | "rt" | "realtime" => CLASS_RT,
            "2" | "be" | "best-effort" => CLASS_BE,
            "3" | "idle" => CLASS_IDLE,
            _ => {
                return Err(format!(
                    "'{text}' is not an I/O priority: give CLASS[,LEVEL] with CLASS 1 (rt), 2 (be) or 3 (idle) and LEVEL 0-7, such as 2,4"
                ))
            }
        };
        let level = match level {
            None => 0,
            Some(l) => match l.parse::<u8>() {
                Ok(n) if n <= 7 && !l.starts_with('+') => n,
                _ => {
                    return Err(format!(
                        "'{text}': the I/O priority level '{l}' is not 0 to 7 (0 is the highest)"
                    ))
                }
            },
        };
        Ok(IoPrio { class, level })
    }
}

impl std::fmt::Display for IoPrio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.class_name(), self.level)
    }
}

/// fio's cmdprio: `pct` percent of the I/Os carry `prio` in their command
/// (io_uring's SQE `ioprio`), the rest the thread's own priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdPrio {
    pub pct: u8,
    pub prio: IoPrio,
}

impl CmdPrio {
    /// `PCT:CLASS[,LEVEL]`, PCT 1-100.
    pub fn parse(text: &str) -> Result<CmdPrio, String> {
        let Some((pct, prio)) = text.trim().split_once(':') else {
            return Err(format!(
                "'{text}' is not a command priority: give PCT:CLASS[,LEVEL], such as 20:1 (20% of the I/Os at class 1, realtime)"
            ));
        };
        let pct = match pct.trim().parse::<u8>() {
            Ok(n) if (1..=100).contains(&n) && !pct.trim().starts_with('+') => n,
            _ => {
                return Err(format!(
                    "'{text}': the share '{pct}' is not a whole percentage from 1 to 100"
                ))
            }
        };
        Ok(CmdPrio {
            pct,
            prio: IoPrio::parse(prio)?,
        })
    }

    /// Out of 2^32: the share as a threshold for a 32-bit random draw, so
    /// the per-I/O choice is one compare.
    pub fn threshold(self) -> u64 {
        (u64::from(self.pct) << 32) / 100
    }
}

impl std::fmt::Display for CmdPrio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.pct, self.prio)
    }
}

/// fio's `ioprio_value`: `class << 13 | hint << 3 | level`, class 0
/// (none) taken as best-effort, as fio and the kernel take it.
pub fn prio_value(class: u8, level: u8, hint: u16) -> u16 {
    let class = if class == 0 { CLASS_BE } else { class };
    (u16::from(class) << IOPRIO_CLASS_SHIFT) | (hint << 3) | u16::from(level)
}

/// An ioprio value's class, level and hint (fio's ioprio_class, ioprio,
/// ioprio_hint): what fio's per-priority figures are named by.
pub fn prio_parts(v: u16) -> (u8, u8, u16) {
    (
        (v >> IOPRIO_CLASS_SHIFT) as u8,
        (v & 7) as u8,
        (v >> 3) & 0x3ff,
    )
}

/// fio's BSSPLIT_MAX: the most entries a cmdprio_bssplit list holds.
const MAX_ENTRIES: usize = 64;

/// One entry of fio's `cmdprio_bssplit`: `pct` percent of the I/Os of
/// `bs` bytes carry the ioprio value `prio` in their command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BsPrio {
    pub bs: u64,
    pub pct: u8,
    pub prio: u16,
}

/// fio's `cmdprio_bssplit`: per direction, which share of each size's
/// I/Os carries which priority; every other I/O goes at the job's own
/// (`--ioprio`, fio's prioclass/prio). Entries of 0% are left out, as
/// fio leaves them; a size with none has no command priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdPrioSplit {
    pub reads: Vec<BsPrio>,
    pub writes: Vec<BsPrio>,
}

impl CmdPrioSplit {
    /// fio's spelling, `READS[,WRITES]` (a write list left out is the
    /// reads'; a third, trims', is ignored as fio ignores it), each list
    /// `SIZE/PCT[/CLASS/LEVEL[/HINT]]:...`. An entry without its own
    /// class and level takes `implicit` (fio's cmdprio_class, cmdprio and
    /// cmdprio_hint: realtime, level 0, no hint unless given). Classes
    /// are 0-3 (0 runs as best-effort), levels 0-7, hints 0-1023; each
    /// size's shares add up to at most 100.
    pub fn parse(
        text: &str,
        size: &dyn Fn(&str) -> Result<u64, String>,
        implicit: u16,
    ) -> Result<CmdPrioSplit, String> {
        let lists: Vec<&str> = text.split(',').map(str::trim).collect();
        if lists.len() > 3 {
            return Err(format!(
                "'{text}' has more than three lists (reads, writes, trims): give READS[,WRITES]"
            ));
        }
        let reads = Self::parse_list(lists[0], size, implicit)?;
        let writes = match lists.get(1) {
            Some(w) if !w.is_empty() => Self::parse_list(w, size, implicit)?,
            _ => reads.clone(),
        };
        Ok(CmdPrioSplit { reads, writes })
    }

    fn parse_list(
        list: &str,
        size: &dyn Fn(&str) -> Result<u64, String>,
        implicit: u16,
    ) -> Result<Vec<BsPrio>, String> {
        let mut out: Vec<BsPrio> = Vec::new();
        for entry in list.split(':').map(str::trim).filter(|e| !e.is_empty()) {
            let f: Vec<&str> = entry.split('/').map(str::trim).collect();
            let bad = |what: String| format!("'{entry}' in '{list}': {what}");
            let bs = size(f[0]).map_err(bad)?;
            if bs == 0 {
                return Err(bad("a size must be above 0".into()));
            }
            let num = |i: usize, max: u32, what: &str| -> Result<u32, String> {
                let t = f.get(i).copied().unwrap_or("0");
                match t.parse::<u32>() {
                    Ok(n) if n <= max && !t.starts_with('+') => Ok(n),
                    _ => Err(bad(format!("the {what} '{t}' is not 0 to {max}"))),
                }
            };
            let pct = if f.get(1).is_some_and(|p| p.is_empty()) {
                0
            } else {
                num(1, 100, "share")?
            };
            let prio = match f.len() {
                1 | 2 => implicit,
                4 | 5 => prio_value(
                    num(2, 3, "class")? as u8,
                    num(3, 7, "level")? as u8,
                    num(4, 1023, "hint")? as u16,
                ),
                _ => {
                    return Err(bad(
                        "give SIZE/PCT, SIZE/PCT/CLASS/LEVEL or SIZE/PCT/CLASS/LEVEL/HINT".into(),
                    ))
                }
            };
            if pct > 0 {
                out.push(BsPrio {
                    bs,
                    pct: pct as u8,
                    prio,
                });
            }
        }
        if out.len() > MAX_ENTRIES {
            return Err(format!("'{list}' has more than {MAX_ENTRIES} entries"));
        }
        out.sort_by_key(|e| e.bs);
        for e in &out {
            let sum: u32 = (out.iter().filter(|x| x.bs == e.bs))
                .map(|x| u32::from(x.pct))
                .sum();
            if sum > 100 {
                return Err(format!(
                    "'{list}': the shares of {} add up to {sum}%, over 100",
                    crate::base::units::fmt_size_arg(e.bs)
                ));
            }
        }
        Ok(out)
    }

    /// The entries of one direction.
    pub fn of(&self, write: bool) -> &[BsPrio] {
        if write {
            &self.writes
        } else {
            &self.reads
        }
    }
}

impl std::fmt::Display for CmdPrioSplit {
    /// Its own spelling, every entry with its class, level and hint
    /// (sizes in bytes): parsed back as it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[BsPrio]| -> String {
            let parts: Vec<String> = (v.iter())
                .map(|e| {
                    let (c, l, h) = prio_parts(e.prio);
                    format!("{}/{}/{c}/{l}/{h}", e.bs, e.pct)
                })
                .collect();
            parts.join(":")
        };
        // An empty list would read as the other's: 0% of the smallest size.
        let or_none = |v: &[BsPrio]| {
            if v.is_empty() {
                "512/0".to_string()
            } else {
                list(v)
            }
        };
        write!(f, "{},{}", or_none(&self.reads), or_none(&self.writes))
    }
}

/// The calling thread's id.
fn tid() -> libc::c_int {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Sets the calling thread's I/O priority (ioprio_set on its thread id).
pub fn set_thread_ioprio(p: IoPrio) -> io::Result<()> {
    // SAFETY: ioprio_set reads its three integer arguments only.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            tid(),
            libc::c_int::from(p.value()),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The I/O priority value of thread `tid` (0: this thread), as the kernel
/// says it (`class << 13 | level`).
pub fn thread_ioprio(tid_: libc::c_int) -> io::Result<u16> {
    let who = if tid_ == 0 { tid() } else { tid_ };
    // SAFETY: ioprio_get reads its two integer arguments only.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, who) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as u16)
    }
}

/// The first node number a memory policy or node list may name: the
/// kernel's MAX_NUMNODES is at most 1024.
const MAX_NODES: usize = 1024;

/// A memory policy, as fio's `numa_mem_policy` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemPolicy {
    /// `default`: the process's policy (MPOL_DEFAULT).
    Default,
    /// `local`: the node the thread runs on (MPOL_LOCAL).
    Local,
    /// `prefer:N`: node N first, others when it is full (MPOL_PREFERRED).
    Prefer(usize),
    /// `bind:LIST`: only these nodes (MPOL_BIND).
    Bind(Vec<usize>),
    /// `interleave:LIST`: pages spread over these nodes (MPOL_INTERLEAVE).
    Interleave(Vec<usize>),
}

/// The kernel's MPOL_* modes.
const MPOL_DEFAULT: libc::c_int = 0;
const MPOL_PREFERRED: libc::c_int = 1;
const MPOL_BIND: libc::c_int = 2;
const MPOL_INTERLEAVE: libc::c_int = 3;
const MPOL_LOCAL: libc::c_int = 4;

impl MemPolicy {
    /// `default`, `local`, `prefer:N`, `bind:LIST`, `interleave:LIST`
    /// (LIST as a CPU list is written: `0-1,3`).
    pub fn parse(text: &str) -> Result<MemPolicy, String> {
        let t = text.trim();
        let bad = || {
            format!(
                "'{text}' is not a memory policy: give default, local, prefer:NODE, bind:NODES or interleave:NODES (NODES such as 0-1)"
            )
        };
        let (mode, nodes) = match t.split_once(':') {
            Some((m, n)) => (m.trim(), Some(n)),
            None => (t, None),
        };
        let list = |n: Option<&str>| -> Result<Vec<usize>, String> {
            let n = n.ok_or_else(bad)?;
            let l = parse_node_list(n)?;
            Ok(l)
        };
        Ok(match mode {
            "default" if nodes.is_none() => MemPolicy::Default,
            "local" if nodes.is_none() => MemPolicy::Local,
            "prefer" => match list(nodes)?.as_slice() {
                [n] => MemPolicy::Prefer(*n),
                _ => return Err(format!("'{text}': prefer takes one node, such as prefer:0")),
            },
            "bind" => MemPolicy::Bind(list(nodes)?),
            "interleave" => MemPolicy::Interleave(list(nodes)?),
            _ => return Err(bad()),
        })
    }

    /// The nodes it names.
    pub fn nodes(&self) -> &[usize] {
        match self {
            MemPolicy::Default | MemPolicy::Local => &[],
            MemPolicy::Prefer(n) => std::slice::from_ref(n),
            MemPolicy::Bind(l) | MemPolicy::Interleave(l) => l,
        }
    }

    /// The kernel's mode number.
    pub fn mode(&self) -> libc::c_int {
        match self {
            MemPolicy::Default => MPOL_DEFAULT,
            MemPolicy::Local => MPOL_LOCAL,
            MemPolicy::Prefer(_) => MPOL_PREFERRED,
            MemPolicy::Bind(_) => MPOL_BIND,
            MemPolicy::Interleave(_) => MPOL_INTERLEAVE,
        }
    }
}

impl std::fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |l: &[usize]| crate::base::cpus::format_cpu_list(l);
        match self {
            MemPolicy::Default => f.write_str("default"),
            MemPolicy::Local => f.write_str("local"),
            MemPolicy::Prefer(n) => write!(f, "prefer:{n}"),
            MemPolicy::Bind(l) => write!(f, "bind:{}", list(l)),
            MemPolicy::Interleave(l) => write!(f, "interleave:{}", list(l)),
        }
    }
}

/// A NUMA node list (`0`, `0-1`, `0,2`): the kernel's list format, no
/// repeats, each node below 1024, sorted.
pub fn parse_node_list(text: &str) -> Result<Vec<usize>, String> {
    let mut l = crate::base::cpus::parse_cpu_list(text).map_err(|e| {
        format!("'{text}' is not a NUMA node list ({e}): give nodes such as 0 or 0-1")
    })?;
    if let Some(n) = l.iter().find(|&&n| n >= MAX_NODES) {
        return Err(format!(
            "NUMA node {n} in '{text}' is past the kernel's {MAX_NODES} nodes"
        ));
    }
    l.sort_unstable();
    Ok(l)
}

/// A node mask as set_mempolicy takes it: 1024 bits.
fn node_mask(nodes: &[usize]) -> [libc::c_ulong; MAX_NODES / 64] {
    let mut mask = [0; MAX_NODES / 64];
    for &n in nodes {
        mask[n / 64] |= 1 << (n % 64);
    }
    mask
}

/// Sets the calling thread's memory policy (set_mempolicy).
pub fn set_thread_mempolicy(p: &MemPolicy) -> io::Result<()> {
    let mask = node_mask(p.nodes());
    let (ptr, maxnode) = if p.nodes().is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), MAX_NODES as libc::c_ulong + 1)
    };
    // SAFETY: the mask lives across the call and holds `maxnode - 1` bits.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, p.mode(), ptr, maxnode) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The calling thread's memory policy as the kernel holds it: its mode
/// and the nodes of its mask (get_mempolicy).
pub fn thread_mempolicy() -> io::Result<(libc::c_int, Vec<usize>)> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0 as libc::c_ulong; MAX_NODES / 64];
    // SAFETY: both out-pointers are valid for the sizes given; addr 0 and
    // flags 0 ask for the thread's policy.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MAX_NODES as libc::c_ulong,
            0usize,
            0 as libc::c_ulong,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let nodes = (0..MAX_NODES)
        .filter(|n| mask[n / 64] & (1 << (n % 64)) != 0)
        .collect();
    Ok((mode, nodes))
}

/// Lets the calling thread run on `cpus` only (sched_setaffinity).
pub fn set_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: c is below CPU_SETSIZE, the set's size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the set is valid for its size; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The CPUs thread `tid` (0: this one) may run on (sched_getaffinity).
pub fn thread_cpus(tid_: libc::pid_t) -> io::Result<Vec<usize>> {
    // SAFETY: as in set_thread_cpus.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the set is valid for its size.
    let r = unsafe { libc::sched_getaffinity(tid_, std::mem::size_of_val(&set), &mut set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: c is below CPU_SETSIZE, the set's size.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The CPUs of NUMA node `node` on `host`, from its sysfs `cpulist`: a
/// bounded read, strictly parsed. `Err` says the node is not there.
pub fn node_cpus(host: &crate::base::host::Host, node: usize) -> Result<Vec<usize>, String> {
    use std::io::Read;
    let path = host.numa_node_cpulist(node);
    let mut text = String::new();
    let read = std::fs::File::open(&path).and_then(|f| f.take(64 << 10).read_to_string(&mut text));
    if let Err(e) = read {
        return Err(match e.kind() {
            io::ErrorKind::NotFound => format!(
                "NUMA node {node} does not exist on this machine (no {}): name a node that `numactl --hardware` lists",
                path.display()
            ),
            _ => format!("cannot read {}: {e}", path.display()),
        });
    }
    let cpus = crate::base::cpus::parse_cpu_list(&text)
        .map_err(|e| format!("{} does not hold a CPU list ({e})", path.display()))?;
    Ok(cpus)
}

/// The CPUs of all of `nodes`, in node order.
pub fn nodes_cpus(host: &crate::base::host::Host, nodes: &[usize]) -> Result<Vec<usize>, String> {
    let mut all = Vec::new();
    for &n in nodes {
        for c in node_cpus(host, n)? {
            if !all.contains(&c) {
                all.push(c);
            }
        }
    }
    Ok(all)
}

/// Whether NUMA node `node` exists on `host` (its sysfs directory).
pub fn node_exists(host: &crate::base::host::Host, node: usize) -> bool {
    host.numa_node_cpulist(node).exists()
}

/// What a worker thread sets on itself before it builds its engine; all
/// off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadSetup {
    /// `--ioprio`: the thread's own I/O priority.
    pub ioprio: Option<IoPrio>,
    /// `--numa-nodes`: the CPUs of those nodes, the thread's affinity.
    pub numa_cpus: Option<Vec<usize>>,
    /// `--numa-mem`: the thread's memory policy.
    pub mem_policy: Option<MemPolicy>,
}

impl ThreadSetup {
    /// Applies it to the calling thread, in the order that matters: the
    /// CPUs first (MPOL_LOCAL means the node it runs on), then the memory
    /// policy (before any buffer is allocated), then the I/O priority.
    pub fn apply(&self) -> Result<(), String> {
        if let Some(cpus) = &self.numa_cpus {
            set_thread_cpus(cpus).map_err(|e| {
                format!(
                    "--numa-nodes: cannot run on CPUs {} ({e})",
                    crate::base::cpus::format_cpu_list(cpus)
                )
            })?;
        }
        if let Some(p) = &self.mem_policy {
            set_thread_mempolicy(p)
                .map_err(|e| format!("--numa-mem {p}: the kernel refused it ({e})"))?;
        }
        if let Some(p) = self.ioprio {
            set_thread_ioprio(p).map_err(|e| ioprio_refused("--ioprio", p, &e))?;
        }
        Ok(())
    }
}

/// The one line for an I/O priority the kernel refused: EPERM for the
/// realtime class says who may use it.
pub fn ioprio_refused(option: &str, p: IoPrio, e: &io::Error) -> String {
    if e.raw_os_error() == Some(libc::EPERM) {
        format!("{option} {p}: the realtime I/O class needs root (CAP_SYS_ADMIN) and the kernel refused it here: run as root or use class 2 (be) or 3 (idle)")
    } else {
        format!("{option} {p}: the kernel refused it ({e})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Result<u64, String> {
        crate::base::units::parse_size(s)
    }

    // cmdprio-bssplit.fio's three forms: the simple one takes the implicit
    // priority (cmdprio_class/cmdprio), the advanced ones their own; 0%
    // entries are left out and a missing write list is the reads'.
    #[test]
    fn cmdprio_bssplit_parses_fio_s_three_forms() {
        let rt0 = prio_value(1, 0, 0);
        let s = CmdPrioSplit::parse("64k/100:1024k/0,1024k/0", &bytes, rt0).unwrap();
        assert_eq!(
            s.reads,
            [BsPrio {
                bs: 65536,
                pct: 100,
                prio: 0x2000
            }]
        );
        assert!(s.writes.is_empty());
        let s = CmdPrioSplit::parse("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0", &bytes, rt0).unwrap();
        let got: Vec<(u8, u16)> = s.reads.iter().map(|e| (e.pct, e.prio)).collect();
        assert_eq!(got, [(25, 0x2001), (75, 0x6002)]);
        let s = CmdPrioSplit::parse("1M/10/2/0/1:2M/90/2/0/0", &bytes, rt0).unwrap();
        assert_eq!(s.reads[0].prio, 0x4000 | (1 << 3));
        assert_eq!(s.writes, s.reads);
        assert_eq!(prio_parts(0x4000 | (3 << 3) | 7), (2, 7, 3));
        // Class 0 runs as best-effort (fio's ioprio_value).
        assert_eq!(prio_value(0, 4, 0), 0x4004);
        let back = CmdPrioSplit::parse(&s.to_string(), &bytes, rt0).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn bad_cmdprio_bssplits_say_what_is_wrong() {
        for (bad, says) in [
            ("64k/60/1/0:64k/50/2/0", "over 100"),
            ("64k/101", "share '101'"),
            ("64k/10/4/0", "class '4'"),
            ("64k/10/1/8", "level '8'"),
            ("64k/10/1/0/1024", "hint '1024'"),
            ("64k/10/1", "SIZE/PCT/CLASS/LEVEL"),
            ("0/10", "above 0"),
            ("64k/x", "share 'x'"),
        ] {
            let e = CmdPrioSplit::parse(bad, &bytes, 0x2000).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn io_priorities_parse() {
        assert_eq!(IoPrio::parse("3").unwrap(), IoPrio { class: 3, level: 0 });
        assert_eq!(
            IoPrio::parse("be,4").unwrap(),
            IoPrio { class: 2, level: 4 }
        );
        assert_eq!(IoPrio::parse("1,7").unwrap().value(), (1 << 13) | 7);
        assert_eq!(IoPrio::parse("idle").unwrap().to_string(), "idle,0");
    }

    #[test]
    fn bad_io_priorities_are_refused() {
        for bad in ["", "0", "4", "rt,8", "2,", "2,-1", "2,+1", "be,x", "2,1,1"] {
            assert!(IoPrio::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn command_priorities_parse() {
        let c = CmdPrio::parse("20:1").unwrap();
        assert_eq!((c.pct, c.prio.class, c.prio.level), (20, 1, 0));
        assert_eq!(c.to_string(), "20:rt,0");
        assert_eq!(CmdPrio::parse("100:be,3").unwrap().threshold(), 1 << 32);
        for bad in ["20", "0:1", "101:1", ":1", "20:", "20:5", "x:1", "+5:1"] {
            assert!(CmdPrio::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn memory_policies_parse() {
        assert_eq!(
            MemPolicy::parse("bind:0").unwrap(),
            MemPolicy::Bind(vec![0])
        );
        assert_eq!(
            MemPolicy::parse("interleave:0-1").unwrap(),
            MemPolicy::Interleave(vec![0, 1])
        );
        assert_eq!(MemPolicy::parse("prefer:1").unwrap(), MemPolicy::Prefer(1));
        assert_eq!(MemPolicy::parse("local").unwrap(), MemPolicy::Local);
        assert_eq!(MemPolicy::parse("default").unwrap(), MemPolicy::Default);
        assert_eq!(
            MemPolicy::parse("interleave:1,0").unwrap().to_string(),
            "interleave:0-1"
        );
        for bad in [
            "",
            "bind",
            "bind:",
            "prefer:0-1",
            "local:0",
            "interleave:a",
            "bind:1024",
            "split:0",
            "bind:0,0",
        ] {
            assert!(MemPolicy::parse(bad).is_err(), "{bad}");
        }
    }

    /// What is set on a thread is what the kernel then says it holds:
    /// ioprio_get, get_mempolicy and sched_getaffinity read back, in a
    /// thread of its own (the test runner's stay as they were).
    #[test]
    fn a_thread_setup_is_what_the_kernel_holds() {
        let node0 = node_cpus(&crate::base::host::Host::real(), 0).unwrap();
        std::thread::spawn(move || {
            let t = ThreadSetup {
                ioprio: Some(IoPrio {
                    class: CLASS_IDLE,
                    level: 0,
                }),
                numa_cpus: Some(node0.clone()),
                mem_policy: Some(MemPolicy::Bind(vec![0])),
            };
            t.apply().unwrap();
            assert_eq!(thread_ioprio(0).unwrap(), 3 << 13);
            assert_eq!(thread_mempolicy().unwrap(), (MPOL_BIND, vec![0]));
            let mut want = node0;
            want.sort_unstable();
            assert_eq!(thread_cpus(0).unwrap(), want);
            set_thread_mempolicy(&MemPolicy::Interleave(vec![0])).unwrap();
            assert_eq!(thread_mempolicy().unwrap(), (MPOL_INTERLEAVE, vec![0]));
            set_thread_mempolicy(&MemPolicy::Local).unwrap();
            assert_eq!(thread_mempolicy().unwrap().0, MPOL_LOCAL);
            set_thread_mempolicy(&MemPolicy::Default).unwrap();
            assert_eq!(thread_mempolicy().unwrap(), (MPOL_DEFAULT, vec![]));
            set_thread_ioprio(IoPrio {
                class: CLASS_BE,
                level: 5,
            })
            .unwrap();
            assert_eq!(thread_ioprio(0).unwrap(), (2 << 13) | 5);
        })
        .join()
        .unwrap();
    }

    /// The realtime class on a thread without CAP_SYS_ADMIN and
    /// CAP_SYS_NICE (dropped from this test's own thread: capabilities
    /// are per thread) is EPERM, and the line says who may use it.
    #[test]
    fn realtime_without_the_capability_is_refused_cleanly() {
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy, Default)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        std::thread::spawn(|| {
            let mut h = Header {
                version: 0x2008_0522,
                pid: 0,
            };
            let mut d = [Data::default(); 2];
            // SAFETY: capget/capset read and write the header and the two
            // data words given, for the calling thread (pid 0).
            unsafe {
                assert_eq!(libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()), 0);
                // CAP_SYS_ADMIN (21) and CAP_SYS_NICE (23).
                let drop = !((1u32 << 21) | (1u32 << 23));
                d[0].effective &= drop;
                d[0].permitted &= drop;
                assert_eq!(libc::syscall(libc::SYS_capset, &mut h, d.as_ptr()), 0);
            }
            let rt = IoPrio {
                class: CLASS_RT,
                level: 0,
            };
            let e = set_thread_ioprio(rt).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EPERM));
            let line = ioprio_refused("--ioprio", rt, &e);
            assert!(line.contains("needs root (CAP_SYS_ADMIN)"), "{line}");
            assert!(!line.contains('\n'));
            // Idle needs no capability.
            set_thread_ioprio(IoPrio {
                class: CLASS_IDLE,
                level: 0,
            })
            .unwrap();
        })
        .join()
        .unwrap();
    }

    /// A node's CPUs come from its cpulist, strictly; a missing node, or a
    /// hostile file, is one line.
    #[test]
    fn node_cpus_read_the_hosts_tree() {
        let t = tempfile::tempdir().unwrap();
        let h = crate::base::host::Host::fixture(t.path());
        let p = h.numa_node_cpulist(1);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "2-3\n").unwrap();
        assert_eq!(node_cpus(&h, 1).unwrap(), vec![2, 3]);
        assert!(node_cpus(&h, 0)
            .unwrap_err()
            .contains("NUMA node 0 does not exist"));
        std::fs::write(&p, "2-3; rm -rf /\n").unwrap();
        assert!(node_cpus(&h, 1)
            .unwrap_err()
            .contains("does not hold a CPU list"));
        std::fs::write(&p, "1".repeat(100_000)).unwrap();
        assert!(node_cpus(&h, 1).is_err());
    }
}
