package system

import "time"

// Report is system_monitoring's structuredContent: one or more samples of
// the metrics asked for.
type Report struct {
	Host  string `json:"host"`
	Route string `json:"route"`
	// Source says how the figures were read: "gopsutil" on this machine,
	// "proc" (fixed read-only commands) on an SSH host.
	Source  string   `json:"source"`
	Samples []Sample `json:"samples"`
	Notes   []string `json:"notes,omitempty"`
}

// Sample is the metrics at one moment. CPU use and network rates are
// measured over the IntervalSeconds before Time.
type Sample struct {
	Time            time.Time      `json:"time"`
	IntervalSeconds float64        `json:"interval_seconds"`
	CPU             *CPUUsage      `json:"cpu,omitempty"`
	Memory          *MemoryUsage   `json:"memory,omitempty"`
	Disks           []DiskUsage    `json:"disks,omitempty"`
	Network         []NetworkIO    `json:"network,omitempty"`
	GPUs            []GPU          `json:"gpus,omitempty"`
	Processes       *ProcessCounts `json:"processes,omitempty"`
}

// CPUUsage is CPU use over a sample's interval, and the load averages.
type CPUUsage struct {
	LogicalCores int     `json:"logical_cores"`
	UsedPercent  float64 `json:"used_percent"`
	Load1        float64 `json:"load1"`
	Load5        float64 `json:"load5"`
	Load15       float64 `json:"load15"`
}

// MemoryUsage is memory and swap. Used is total minus available.
type MemoryUsage struct {
	TotalBytes     uint64  `json:"total_bytes"`
	AvailableBytes uint64  `json:"available_bytes"`
	UsedBytes      uint64  `json:"used_bytes"`
	UsedPercent    float64 `json:"used_percent"`
	SwapTotalBytes uint64  `json:"swap_total_bytes"`
	SwapUsedBytes  uint64  `json:"swap_used_bytes"`
}

// DiskUsage is one mounted filesystem. Free is what an unprivileged user
// may still use (statvfs f_bavail).
type DiskUsage struct {
	Mount       string  `json:"mount"`
	Device      string  `json:"device"`
	FSType      string  `json:"fstype"`
	TotalBytes  uint64  `json:"total_bytes"`
	UsedBytes   uint64  `json:"used_bytes"`
	FreeBytes   uint64  `json:"free_bytes"`
	UsedPercent float64 `json:"used_percent"`
}

// NetworkIO is one interface's counters since boot, and its rates over the
// sample's interval.
type NetworkIO struct {
	Interface     string  `json:"interface"`
	RxBytes       uint64  `json:"rx_bytes"`
	TxBytes       uint64  `json:"tx_bytes"`
	RxPackets     uint64  `json:"rx_packets"`
	TxPackets     uint64  `json:"tx_packets"`
	RxBytesPerSec float64 `json:"rx_bytes_per_sec"`
	TxBytesPerSec float64 `json:"tx_bytes_per_sec"`
}

// ProcessCounts is how many processes run, and the ones using the most
// memory (CPU percent is each process's average over its life, as ps
// shows it).
type ProcessCounts struct {
	Total int       `json:"total"`
	Top   []Process `json:"top"`
}

// Process is one process.
type Process struct {
	PID        int32   `json:"pid"`
	Name       string  `json:"name"`
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUPercent float64 `json:"cpu_percent"`
}

// GPU is one GPU as nvidia-smi reports it.
type GPU struct {
	Index              int      `json:"index"`
	Name               string   `json:"name"`
	MemoryTotalBytes   uint64   `json:"memory_total_bytes"`
	MemoryUsedBytes    uint64   `json:"memory_used_bytes"`
	UtilizationPercent *float64 `json:"utilization_percent,omitempty"`
	TemperatureC       *float64 `json:"temperature_c,omitempty"`
	Driver             string   `json:"driver,omitempty"`
}

// Hardware is get_hardware_info's structuredContent.
type Hardware struct {
	Host        string    `json:"host"`
	Route       string    `json:"route"`
	Source      string    `json:"source"`
	CollectedAt time.Time `json:"collected_at"`
	// Cached is set when the facts come from an earlier call (refresh
	// reads them again).
	Cached      bool          `json:"cached"`
	OS          OSInfo        `json:"os"`
	CPU         CPUInfo       `json:"cpu"`
	Memory      MemoryInfo    `json:"memory"`
	Disks       []BlockDevice `json:"disks"`
	Filesystems []DiskUsage   `json:"filesystems"`
	GPUs        []GPU         `json:"gpus"`
	Notes       []string      `json:"notes,omitempty"`
}

// OSInfo is the operating system, kernel and uptime.
type OSInfo struct {
	Hostname        string `json:"hostname"`
	OS              string `json:"os"`
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platform_version"`
	Kernel          string `json:"kernel"`
	Arch            string `json:"arch"`
	UptimeSeconds   uint64 `json:"uptime_seconds"`
}

// CPUInfo is the processor model and counts.
type CPUInfo struct {
	Model         string  `json:"model"`
	Vendor        string  `json:"vendor"`
	Sockets       int     `json:"sockets"`
	PhysicalCores int     `json:"physical_cores"`
	LogicalCores  int     `json:"logical_cores"`
	MHz           float64 `json:"mhz"`
}

// MemoryInfo is installed memory and swap.
type MemoryInfo struct {
	TotalBytes     uint64 `json:"total_bytes"`
	SwapTotalBytes uint64 `json:"swap_total_bytes"`
}

// BlockDevice is one disk.
type BlockDevice struct {
	Name       string `json:"name"`
	SizeBytes  uint64 `json:"size_bytes"`
	Model      string `json:"model,omitempty"`
	Rotational bool   `json:"rotational"`
}
