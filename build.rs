//! Decides, once per build, which of the machine's capabilities the
//! integration tests may rely on, as `cfg` flags the tests read:
//!
//! | cfg             | set when                                              |
//! |-----------------|-------------------------------------------------------|
//! | `sb_root`       | the build runs as root (loop devices, mounts, sysfs)  |
//! | `sb_uring`      | the kernel accepts `io_uring_setup`                   |
//! | `sb_mkfs_ext4`  | `mkfs.ext4` is installed                              |
//! | `sb_fio`        | `fio` is installed (run --print-fio's line run with it)|
//! | `sb_mkfs_btrfs` | `mkfs.btrfs` is installed                             |
//! | `sb_mkfs_xfs`   | `mkfs.xfs` is installed (xfsprogs)                    |
//! | `sb_cryptsetup` | `cryptsetup` is installed (LUKS containers in files)  |
//! | `sb_swap`       | `mkswap` and `swapon` are installed                   |
//! | `sb_setpriv`    | `setpriv` and `prlimit` are installed                 |
//! | `sb_blkio`      | a cgroup v1 blkio hierarchy is mounted                |
//! | `sb_multi_cpu`  | this process may run on two or more CPUs              |
//! | `sb_chromium`   | `chromium` is installed (the HTML report's browser test)|
//! | `sb_prometheus_client` | Python's `prometheus_client` parser imports    |
//! | `sb_promtool`   | `promtool` (Debian package `prometheus`) is installed |
//! | `sb_lab`        | scripts/lab.sh can run: root (it installs qemu and the |
//! |                 | array tools with apt), or all of them already there   |
//! | `sb_fleet_ssh`  | sshd, ssh, pdsh, clush, faketime and ip are installed |
//! |                 | (tests/it/fleet_ssh.rs: hosts in network namespaces)  |
//! | `sb_kubernetes_validate` | kubernetes-validate (PyPI) is installed      |
//! | `sb_fio_plot`   | fio-plot (PyPI) is installed and imports (python3)    |
//! | `sb_signature_tools` | root, and the tools that make the on-disk formats |
//! |                 | tests/it/signatures.rs refuses: cryptsetup, mkfs.f2fs, |
//! |                 | mkfs.xfs, mkfs.vfat, mkfs.minix, mkfs.bfs, mkfs.cramfs, |
//! |                 | mkswap, pvcreate, sgdisk                              |
//! | `sb_compressors` | `zstd` and `lz4` are installed (tests/it/written_data.rs) |
//! | `sb_thp`        | transparent huge pages are on (`always` or `madvise` in |
//! |                 | /sys/kernel/mm/transparent_hugepage/enabled)          |
//! | `sb_zram`       | root, and zram devices can be added (zram-control, or |
//! |                 | the zram module to load)                              |
//!
//! A test that needs what is missing is compiled with
//! `#[ignore = "needs ..."]`, so `cargo test` lists it as ignored, with the
//! reason, instead of a silent "ok". Under `CI=true` every flag is set: the
//! tests run, and one whose requirement is missing fails (tests/it/common's
//! `require` panics with the reason) rather than being skipped.
//!
//! Nothing here affects the library or the binary.

use std::path::Path;

const FLAGS: [&str; 22] = [
    "sb_root",
    "sb_uring",
    "sb_mkfs_ext4",
    "sb_fio",
    "sb_mkfs_btrfs",
    "sb_mkfs_xfs",
    "sb_cryptsetup",
    "sb_swap",
    "sb_setpriv",
    "sb_blkio",
    "sb_multi_cpu",
    "sb_lab",
    "sb_fleet_ssh",
    "sb_kubernetes_validate",
    "sb_fio_plot",
    "sb_chromium",
    "sb_prometheus_client",
    "sb_promtool",
    "sb_signature_tools",
    "sb_compressors",
    "sb_thp",
    "sb_zram",
];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // Whether we are CI, and who builds: sudo and su change these.
    for var in ["CI", "USER", "SUDO_UID", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    // Installing a tool changes these directories.
    for dir in [
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
        "/usr/lib/python3/dist-packages",
    ] {
        if Path::new(dir).is_dir() {
            println!("cargo::rerun-if-changed={dir}");
        }
    }
    for flag in FLAGS {
        println!("cargo::rustc-check-cfg=cfg({flag})");
    }

    let ci = std::env::var("CI")
        .map(|v| !v.is_empty() && v != "false" && v != "0")
        .unwrap_or(false);
    let root = is_root();
    let have = |flag: &str| -> bool {
        match flag {
            "sb_root" => root,
            "sb_uring" => uring(),
            "sb_mkfs_ext4" => on_path("mkfs.ext4"),
            "sb_fio" => on_path("fio"),
            "sb_mkfs_btrfs" => on_path("mkfs.btrfs"),
            "sb_mkfs_xfs" => on_path("mkfs.xfs"),
            "sb_cryptsetup" => on_path("cryptsetup"),
            "sb_swap" => on_path("mkswap") && on_path("swapon"),
            "sb_setpriv" => on_path("setpriv") && on_path("prlimit"),
            "sb_blkio" => Path::new("/sys/fs/cgroup/blkio").is_dir(),
            "sb_promtool" => on_path("promtool"),
            "sb_compressors" => on_path("zstd") && on_path("lz4"),
            "sb_thp" => thp(),
            "sb_zram" => {
                root && (Path::new("/sys/class/zram-control/hot_add").exists()
                    || std::process::Command::new("modprobe")
                        .args(["-n", "zram"])
                        .output()
                        .is_ok_and(|o| o.status.success()))
            }
            // The python3 on PATH, or Debian's (where apt installs it).
            "sb_prometheus_client" => ["python3", "/usr/bin/python3"].iter().any(|py| {
                std::process::Command::new(py)
                    .args(["-c", "import prometheus_client.parser"])
                    .output()
                    .is_ok_and(|o| o.status.success())
            }),
            "sb_multi_cpu" => std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2),
            "sb_chromium" => on_path("chromium"),
            "sb_lab" => {
                root || [
                    "qemu-system-x86_64",
                    "busybox",
                    "mdadm",
                    "dmsetup",
                    "lvm",
                    "mkfs.btrfs",
                    "cpio",
                ]
                .iter()
                .all(|t| on_path(t))
            }
            "sb_fleet_ssh" => [
                "sshd",
                "ssh",
                "ssh-keygen",
                "pdsh",
                "clush",
                "faketime",
                "ip",
                "unshare",
            ]
            .iter()
            .all(|t| on_path(t)),
            "sb_kubernetes_validate" => on_path("kubernetes-validate"),
            "sb_fio_plot" => {
                on_path("fio-plot")
                    && std::process::Command::new("python3")
                        .args(["-c", "import fio_plot.fiolib.getdata"])
                        .output()
                        .is_ok_and(|o| o.status.success())
            }
            "sb_signature_tools" => {
                root && [
                    "cryptsetup",
                    "mkfs.f2fs",
                    "mkfs.xfs",
                    "mkfs.vfat",
                    "mkfs.minix",
                    "mkfs.bfs",
                    "mkfs.cramfs",
                    "mkswap",
                    "pvcreate",
                    "sgdisk",
                ]
                .iter()
                .all(|t| on_path(t))
            }
            _ => false,
        }
    };
    for flag in FLAGS {
        if ci || have(flag) {
            println!("cargo::rustc-cfg={flag}");
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// io_uring_setup(1, params) succeeds (it fails with ENOSYS on old kernels,
/// EPERM when disabled by sysctl or a seccomp filter).
fn uring() -> bool {
    // struct io_uring_params is 120 bytes; zeroed asks for defaults.
    let mut params = [0u8; 120];
    // SAFETY: params is a writable buffer of the size the kernel expects.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd >= 0 {
        // SAFETY: closing the descriptor we were just given.
        unsafe { libc::close(fd as i32) };
        true
    } else {
        false
    }
}

/// Transparent huge pages can be had: the kernel's setting is `[always]`
/// or `[madvise]` (the buffer asks with madvise), not `[never]`.
fn thp() -> bool {
    let path = "/sys/kernel/mm/transparent_hugepage/enabled";
    println!("cargo::rerun-if-changed={path}");
    std::fs::read_to_string(path).is_ok_and(|s| s.contains("[always]") || s.contains("[madvise]"))
}

fn on_path(tool: &str) -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .filter(|d| !d.is_empty())
        .any(|d| Path::new(d).join(tool).is_file());
    found
}
