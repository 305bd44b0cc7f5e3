"""The results' CPU record: the model name from /proc/cpuinfo, the bf16 flag."""
from trafficenvs.bench import cpu

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu vme avx512f avx512_bf16 avx512_vnni
"""


def test_the_model_name_and_bf16_flag_are_read_from_cpuinfo(tmp_path, monkeypatch):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    monkeypatch.setattr(cpu, "CPUINFO", path)
    assert cpu.cpu_name() == "AMD EPYC 9R14 96-Core Processor"
    assert cpu.cpu_has_bf16()


def test_without_cpuinfo_the_name_falls_back_and_bf16_is_false(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu, "CPUINFO", tmp_path / "absent")
    assert isinstance(cpu.cpu_name(), str)
    assert not cpu.cpu_has_bf16()
