"""What `league diagnose` reads from the machine: the GPU (if any), and a sampler of CPU, memory
and GPU use over a stretch of work.

CPU use is per process (the driver, each game worker): CPU seconds (user + system) spent between
the first and the last time the sampler saw the process, over the wall time between them, so 100%
is one core kept busy. Memory is resident set size (RSS), peaked over the samples. GPU
utilisation comes from NVML through `torch.cuda.utilization` (needs nvidia-ml-py); GPU memory
from `torch.cuda.mem_get_info` (the whole device, no NVML needed) and torch's own allocator peak.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field

import psutil
import torch

MIB = 1024 * 1024


def gpu_status() -> tuple[bool, str]:
    """(CUDA usable here, a line saying which GPU or why there is none)."""
    if torch.cuda.is_available():
        index = torch.cuda.current_device()
        return True, f"GPU: {torch.cuda.get_device_name(index)} (cuda:{index}, CUDA {torch.version.cuda})"
    if torch.version.cuda is None and not getattr(torch.version, "hip", None):
        return False, (f"no GPU: torch {torch.__version__} is a CPU build; GPU figures are left empty "
                       "(null in --json).")
    return False, "no GPU: torch.cuda.is_available() is False here; GPU figures are left empty (null in --json)."


@dataclass
class _Seen:
    role: str
    first_t: float
    first_cpu: float
    last_t: float
    last_cpu: float
    peak_rss: int

    @property
    def cpu_percent(self) -> float | None:
        wall = self.last_t - self.first_t
        return 100.0 * (self.last_cpu - self.first_cpu) / wall if wall > 0 else None


def _busy_percent(before, after) -> float:
    """A core's busy share between two psutil.cpu_times readings (everything but idle and iowait)."""
    def idle(t) -> float:
        return t.idle + getattr(t, "iowait", 0.0)

    def whole(t) -> float:  # Linux counts guest time inside user time too
        return sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)

    total = whole(after) - whole(before)
    return 100.0 * (1.0 - (idle(after) - idle(before)) / total) if total > 0 else 0.0


def _role(proc: psutil.Process, driver: int) -> str:
    """A worker started by spawn, or forked by the fork server (arena.engine.procs.worker_context: its command
    line is the server's, its parent the server); the server and the resource tracker are helpers."""
    try:
        cmdline = " ".join(proc.cmdline())
        parent = proc.ppid()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return "other"
    if "resource_tracker" in cmdline or ("forkserver" in cmdline and parent == driver):
        return "helper"
    return "worker" if "multiprocessing" in cmdline else "other"


@dataclass
class ResourceSampler:
    """Samples this process and its children every `interval` seconds in a thread (a context manager)."""

    interval: float = 0.25
    gpu: bool = False
    processes: dict[int, _Seen] = field(default_factory=dict)
    peak_tree_rss: int = 0
    gpu_util: list[float] = field(default_factory=list)
    gpu_times: list[float] = field(default_factory=list)  # time.perf_counter() of each gpu_util sample
    update_spans: list[tuple[float, float]] = field(default_factory=list)  # (start, end) of each PPO update
    gpu_used_peak: int | None = None
    notes: list[str] = field(default_factory=list)
    core_busy_percent: list[float] = field(default_factory=list)  # each core's busy share between enter and exit

    def __post_init__(self) -> None:
        self._me = psutil.Process(os.getpid())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="diagnose-sampler", daemon=True)
        self._gpu_util_ok = self.gpu

    def __enter__(self):
        if self.gpu:
            torch.cuda.reset_peak_memory_stats()
        self._sample()
        self._cores = psutil.cpu_times(percpu=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.core_busy_percent = [_busy_percent(a, b) for a, b in zip(self._cores, psutil.cpu_times(percpu=True))]

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        now = time.perf_counter()
        try:
            procs = [self._me] + self._me.children(recursive=True)
        except psutil.NoSuchProcess:
            procs = [self._me]
        tree_rss = 0
        for proc in procs:
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    rss = proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            cpu = times.user + times.system
            tree_rss += rss
            seen = self.processes.get(proc.pid)
            if seen is None:
                role = "driver" if proc.pid == self._me.pid else _role(proc, self._me.pid)
                self.processes[proc.pid] = _Seen(role, now, cpu, now, cpu, rss)
            else:
                seen.last_t, seen.last_cpu, seen.peak_rss = now, cpu, max(seen.peak_rss, rss)
        self.peak_tree_rss = max(self.peak_tree_rss, tree_rss)
        if self.gpu:
            self._sample_gpu()

    def _sample_gpu(self) -> None:
        free, total = torch.cuda.mem_get_info()
        self.gpu_used_peak = max(self.gpu_used_peak or 0, total - free)
        if not self._gpu_util_ok:
            return
        try:
            self.gpu_util.append(float(torch.cuda.utilization()))
            self.gpu_times.append(time.perf_counter())
        except Exception as exc:  # noqa: BLE001 -- no nvidia-ml-py (ModuleNotFoundError), or NVML refused (NVMLError_*)
            self._gpu_util_ok = False
            self.notes.append(f"GPU utilisation unavailable ({type(exc).__name__}: {str(exc)[:100]}); "
                              "install nvidia-ml-py for NVML.")

    # ------------------------------------------------------------------ results

    def cpu_by_role(self, role: str) -> list[float]:
        """CPU use (% of one core) of each process of `role` seen at least twice, in pid order."""
        return [s.cpu_percent for _, s in sorted(self.processes.items())
                if s.role == role and s.cpu_percent is not None]

    def peak_rss(self, role: str) -> int:
        return max((s.peak_rss for s in self.processes.values() if s.role == role), default=0)

    def torch_gpu_peak(self) -> int | None:
        return torch.cuda.max_memory_allocated() if self.gpu else None


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class SystemReport:
    """CPU use (100 = one core) and peak resident memory of the processes of a sampled run."""

    driver_cpu_percent: float | None  # None when the driver was seen only once
    worker_cpu_percent: list[float]  # each game worker, in pid order
    driver_peak_mib: float
    worker_peak_mib: float  # the largest game worker
    total_peak_mib: float  # all processes together

    @property
    def total_cpu_percent(self) -> float:
        return sum(([] if self.driver_cpu_percent is None else [self.driver_cpu_percent]) + self.worker_cpu_percent)


@dataclass(frozen=True)
class GpuReport:
    """GPU use over a sampled run; every figure None without CUDA (or without NVML, for utilisation)."""

    utilization_mean_percent: float | None = None
    utilization_max_percent: float | None = None
    utilization_update_percent: float | None = None  # mean over the samples taken during PPO updates
    utilization_collection_percent: float | None = None  # mean over the rest of the run (collection)
    memory_used_peak_mib: float | None = None  # the whole device
    torch_allocated_peak_mib: float | None = None


def system_report(sampler: ResourceSampler) -> SystemReport:
    driver = sampler.cpu_by_role("driver")
    return SystemReport(driver_cpu_percent=driver[0] if driver else None,
                        worker_cpu_percent=sampler.cpu_by_role("worker"),
                        driver_peak_mib=sampler.peak_rss("driver") / MIB,
                        worker_peak_mib=sampler.peak_rss("worker") / MIB,
                        total_peak_mib=sampler.peak_tree_rss / MIB)


def gpu_report(sampler: ResourceSampler | None) -> GpuReport:
    """What `sampler` saw of the GPU; an empty report for None (no GPU here)."""
    if sampler is None:
        return GpuReport()
    util, used, peak = sampler.gpu_util, sampler.gpu_used_peak, sampler.torch_gpu_peak()
    during = [any(a <= t <= b for a, b in sampler.update_spans) for t in sampler.gpu_times]
    in_update = [u for u, d in zip(util, during) if d]
    in_collection = [u for u, d in zip(util, during) if not d]
    return GpuReport(utilization_mean_percent=statistics.fmean(util) if util else None,
                     utilization_max_percent=max(util) if util else None,
                     utilization_update_percent=statistics.fmean(in_update) if in_update else None,
                     utilization_collection_percent=statistics.fmean(in_collection) if in_collection else None,
                     memory_used_peak_mib=used / MIB if used is not None else None,
                     torch_allocated_peak_mib=peak / MIB if peak is not None else None)
