"""Plugins and custom ops from Python."""
import pytest

import loom


def test_plugins_lists_cpu_and_sim():
    loom.ones(1)  # loads cpu
    names = {p["name"]: p for p in loom.plugins()}
    assert names["cpu"]["state"] == "loaded"
    assert "sim" in names


def test_plugins_and_kernels_show_what_loom_info_shows():
    # Loaded before listing: every loaded plugin reports its kernels.
    names = {p["name"]: p for p in loom.plugins()}
    assert names["sim"]["state"] == "loaded" and names["sim"]["kernels"] > 0
    ks = {k["op"]: k for k in loom.kernels("sim")}
    assert "float32" in ks["add"]["dtypes"] and "int64" not in ks["add"]["dtypes"]
    assert ks["add"]["via"] is None and ks["add_"]["via"] == "add"
    assert ks["add"]["provider"] == "plugin 'sim'"
    with pytest.raises(ValueError, match="did you mean 'sim'"):
        loom.kernels("simm")
    with pytest.raises(RuntimeError, match="device type 'simm'.*did you mean 'sim'"):
        loom.ones(2).to("simm")


def test_load_plugin_failure_says_why():
    with pytest.raises(ValueError, match="cannot open manifest"):
        loom.load_plugin("/nonexistent/plugin.json")


def test_fallback_stats_count_sim_fallbacks():
    loom.set_fallback_policy("allow")
    a = loom.arange(6.0).view(2, 3).to("sim")
    before = loom.fallback_stats().get(("matmul", "sim"), 0)
    (a @ a.T).cpu()
    assert loom.fallback_stats()[("matmul", "sim")] == before + 1
    with pytest.raises(ValueError, match="fallback policy"):
        loom.set_fallback_policy("sometimes")


def test_errors_carry_their_status_and_class():
    a = loom.arange(6.0).view(2, 3).to("sim")
    loom.set_fallback_policy("error")
    try:
        with pytest.raises(loom.UnsupportedError, match="op 'matmul' has no kernel on device 'sim'") as e:
            a @ a.T
    finally:
        loom.set_fallback_policy("allow")
    assert e.value.status == "UNSUPPORTED"
    assert isinstance(e.value, NotImplementedError) and isinstance(e.value, RuntimeError)
    with pytest.raises(RuntimeError) as bad:
        loom.ones(2, 3) @ loom.ones(2, 3)
    assert bad.value.status == "INVALID_ARGUMENT"
    assert issubclass(loom.DeviceError, RuntimeError)
    assert issubclass(loom.OutOfMemoryError, RuntimeError)


def test_library_defines_an_op_implemented_in_python():
    lib = loom.library.Library("pytest_ext")
    lib.define("axpy(Tensor self, Tensor other, float alpha) -> Tensor")

    @lib.impl("axpy", "cpu")
    def axpy(a, b, alpha):
        return a * alpha + b

    x, y = loom.ones(3), loom.arange(3.0)
    assert loom.axpy(x, y, 2.0).tolist() == [2.0, 3.0, 4.0]
    assert x.axpy(y, alpha=0.5).tolist() == [0.5, 1.5, 2.5]
    # sim has no implementation: the CPU one runs through the fallback.
    assert x.to("sim").axpy(y.to("sim"), 1.0).cpu().tolist() == [1.0, 2.0, 3.0]

    @lib.impl("axpy", "sim")
    def bad(a, b, alpha):
        raise ValueError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        x.to("sim").axpy(y.to("sim"), 1.0)
