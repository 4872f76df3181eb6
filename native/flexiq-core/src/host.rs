//! This process as workers' registrations and job attempts name it: its host and process id.

use std::sync::LazyLock;

/// The host name: the environment's when set (HOSTNAME in shells and containers, COMPUTERNAME
/// on Windows), else the kernel's (Linux), else "unknown". Read once.
pub fn name() -> &'static str {
    static NAME: LazyLock<String> = LazyLock::new(|| {
        ["HOSTNAME", "COMPUTERNAME"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .chain(std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
            .map(|n| n.trim().to_owned())
            .find(|n| !n.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    });
    &NAME
}

/// `host:pid`, what a job's attempts record as their worker's process.
pub fn process_label() -> String {
    format!("{}:{}", name(), std::process::id())
}
