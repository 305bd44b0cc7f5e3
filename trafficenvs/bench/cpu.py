"""What processor a benchmark ran on, for the results' ``machine`` records.

Figures on a shared VM differ by chip, so every results file names the CPU; the
benchmarks read it here, once, rather than each parsing ``/proc/cpuinfo``."""
from __future__ import annotations

import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def _cpuinfo() -> str:
    try:
        return CPUINFO.read_text()
    except OSError:  # not Linux, or no procfs
        return ""


def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    for line in _cpuinfo().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpu_has_bf16() -> bool:
    """Whether the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), the
    condition under which ``--precision bf16`` pays on the CPU."""
    flags = _cpuinfo()
    return "avx512_bf16" in flags or "amx_bf16" in flags
