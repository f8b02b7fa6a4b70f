"""loom.optim: optimizers and lr schedulers against torch.optim (PyTorch 1.13) as the oracle."""
import math
import warnings

import numpy as np
import pytest

import loom
from loom import optim
from loom.optim import lr_scheduler

torch = pytest.importorskip("torch", reason="torch is the oracle for optimizer trajectories")

rng = np.random.default_rng(0)
INIT = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(5).astype(np.float32)]
COEF = [rng.standard_normal((3, 4)).astype(np.float32), rng.uniform(0.5, 1.5, 5).astype(np.float32)]


def _loss(lib, params, coefs):
    # Gradients that depend on the parameters (not constant), so the trajectories can drift apart.
    a, b = params
    ca, cb = coefs
    return (a * ca).sin().sum() + (b * b * cb).sum() + (a * a).sum() * 0.1


def _trajectory(lib, make_opt, steps, closure=False):
    params = [lib.tensor(x.tolist(), requires_grad=True) for x in INIT]
    coefs = [lib.tensor(c.tolist()) for c in COEF]
    opt = make_opt(lib, params)
    out = []
    for _ in range(steps):
        def closure_fn():
            opt.zero_grad()
            loss = _loss(lib, params, coefs)
            loss.backward()
            return loss
        if closure:
            opt.step(closure_fn)
        else:
            closure_fn()
            opt.step()
        out.append([np.array(p.detach().tolist(), dtype=np.float32) for p in params])
    return out, opt


def _opt(name, **kwargs):
    def make(lib, params):
        cls = getattr(lib.optim, name)
        return cls(params, **kwargs)
    return make


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, weight_decay=0.05)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[n + str(sorted(k.items())) for n, k in CONFIGS])
def test_trajectory_matches_torch(name, kwargs):
    ours, _ = _trajectory(loom, _opt(name, **kwargs), steps=10)
    theirs, _ = _trajectory(torch, _opt(name, **kwargs), steps=10)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=2e-5, atol=2e-6, err_msg="step {}".format(step))


def test_closure_returns_loss_and_runs_with_grad():
    ours, _ = _trajectory(loom, _opt("SGD", lr=0.1, momentum=0.9), steps=3, closure=True)
    theirs, _ = _trajectory(torch, _opt("SGD", lr=0.1, momentum=0.9), steps=3, closure=True)
    np.testing.assert_allclose(ours[-1][0], theirs[-1][0], rtol=1e-5, atol=1e-6)
    p = loom.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.5)
    with loom.no_grad():  # the closure still builds a graph
        loss = opt.step(lambda: _backward((p * p).sum()))
    assert loss.item() == 5.0
    assert p.tolist() == [0.0, 0.0]


def _backward(loss):
    loss.backward()
    return loss


def test_param_groups_have_their_own_options():
    a = loom.tensor([1.0], requires_grad=True)
    b = loom.tensor([1.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.0
    (a + b).sum().backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == pytest.approx([0.5])
    c = loom.tensor([1.0], requires_grad=True)
    opt.add_param_group({"params": [c], "lr": 1.0})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["dampening"] == 0


def test_params_without_grad_are_skipped():
    a = loom.tensor([1.0], requires_grad=True)
    b = loom.tensor([1.0], requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.tolist() == [1.0] and b not in opt.state and a in opt.state


def test_sgd_momentum_after_the_parameter_changes_dtype():
    # The fused step needs the buffer in the parameter's dtype; a buffer left
    # in float32 by model.double() takes the op-by-op path, as before.
    lin = loom.nn.Linear(3, 2)
    opt = optim.SGD(lin.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)
    x = loom.randn(4, 3)
    for _ in range(2):
        opt.zero_grad()
        lin(x).sum().backward()
        opt.step()
    lin.double()
    opt.zero_grad()
    lin(x.double()).sum().backward()
    opt.step()
    assert lin.weight.dtype == loom.float64 and bool(lin.weight.isfinite().all())


def test_zero_grad():
    p = loom.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_works_on_a_parameter_subclass():
    class Parameter(loom.Tensor):
        pass
    w = loom.Tensor._make_subclass(Parameter, loom.tensor([1.0, -1.0]), True)
    opt = optim.AdamW([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert isinstance(w, Parameter) and w.requires_grad and w.is_leaf
    assert w.tolist()[0] < 1.0 and w.tolist()[1] > -1.0


def test_bad_arguments_raise_clear_errors():
    p = loom.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        optim.SGD([p])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([p, 3.0], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})


def test_state_dict_has_pytorchs_layout_and_round_trips():
    ours, opt = _trajectory(loom, _opt("Adam", lr=0.05, amsgrad=True), steps=3)
    _, topt = _trajectory(torch, _opt("Adam", lr=0.05, amsgrad=True), steps=3)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"][0]["params"] == tsd["param_groups"][0]["params"] == [0, 1]
    assert set(sd["param_groups"][0]) == set(tsd["param_groups"][0])
    assert set(sd["state"]) == set(tsd["state"]) == {0, 1}
    assert set(sd["state"][0]) == set(tsd["state"][0])
    assert float(sd["state"][0]["step"]) == float(tsd["state"][0]["step"]) == 3.0
    np.testing.assert_allclose(sd["state"][1]["exp_avg_sq"].tolist(), tsd["state"][1]["exp_avg_sq"].tolist(),
                               rtol=1e-5, atol=1e-8)

    # A fresh optimizer loaded from the state dict continues exactly like the original.
    params = [loom.tensor(x.tolist(), requires_grad=True) for x in ours[-1]]
    fresh = optim.Adam(params, lr=0.123, amsgrad=True)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == 0.05 and fresh.param_groups[0]["params"] == params
    assert fresh.state[params[0]]["exp_avg"] is not opt.state[opt.param_groups[0]["params"][0]]["exp_avg"]
    coefs = [loom.tensor(c.tolist()) for c in COEF]
    orig = opt.param_groups[0]["params"]
    for ps, o in ((params, fresh), (orig, opt)):
        o.zero_grad()
        _loss(loom, ps, coefs).backward()
        o.step()
    for a, b in zip(params, orig):
        assert a.tolist() == b.tolist()


def test_load_state_dict_from_torch_values_and_errors():
    _, topt = _trajectory(torch, _opt("SGD", lr=0.1, momentum=0.9), steps=2)
    tsd = topt.state_dict()
    state = {k: {"momentum_buffer": loom.tensor(v["momentum_buffer"].tolist())} for k, v in tsd["state"].items()}
    sd = {"state": state, "param_groups": tsd["param_groups"]}
    params = [loom.tensor(x.tolist(), requires_grad=True) for x in INIT]
    opt = optim.SGD(params, lr=0.5)
    opt.load_state_dict(sd)
    assert opt.state[params[1]]["momentum_buffer"].tolist() == pytest.approx(
        tsd["state"][1]["momentum_buffer"].tolist())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [dict(tsd["param_groups"][0], params=[0])]})
    # A tensor step (PyTorch's format) becomes a number.
    a = optim.Adam(params)
    a.load_state_dict({"state": {0: {"step": loom.tensor(4.0), "exp_avg": loom.zeros(3, 4),
                                     "exp_avg_sq": loom.zeros(3, 4)}},
                       "param_groups": a.state_dict()["param_groups"]})
    assert a.state[params[0]]["step"] == 4.0


def test_repr_lists_groups():
    opt = optim.SGD([loom.tensor([1.0], requires_grad=True)], lr=0.1)
    assert repr(opt).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


# ---------------------------------------------------------------------------------------------- schedulers

def _lrs(lib, make_sched, steps, opt_name="SGD", groups=2):
    params = [{"params": [lib.tensor([1.0], requires_grad=True)], "lr": 0.1 * (i + 1)} for i in range(groups)]
    opt = getattr(lib.optim, opt_name)(params, lr=0.1, **({"momentum": 0.9} if opt_name == "SGD" else {}))
    sched = make_sched(lib.optim.lr_scheduler, opt)
    out = []
    for _ in range(steps):
        out.append((list(sched.get_last_lr()), [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
        opt.step()
        sched.step()
    return out, sched


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=20),
    "OneCycleLR-linear-3phase": lambda m, o: m.OneCycleLR(o, max_lr=1.0, epochs=4, steps_per_epoch=5,
                                                          anneal_strategy="linear", three_phase=True,
                                                          pct_start=0.25),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_scheduler_lrs_match_torch(name):
    ours, _ = _lrs(loom, SCHEDULERS[name], 20)
    theirs, _ = _lrs(torch, SCHEDULERS[name], 20)
    for step, ((lr_a, mom_a), (lr_b, mom_b)) in enumerate(zip(ours, theirs)):
        assert lr_a == pytest.approx(lr_b, rel=1e-12, abs=1e-15), "step {}".format(step)
        assert mom_a == pytest.approx(mom_b, rel=1e-12), "step {}".format(step)


def test_one_cycle_cycles_adams_beta1():
    ours, _ = _lrs(loom, SCHEDULERS["OneCycleLR"], 20, opt_name="Adam")
    theirs, _ = _lrs(torch, SCHEDULERS["OneCycleLR"], 20, opt_name="Adam")
    for (lr_a, b_a), (lr_b, b_b) in zip(ours, theirs):
        assert lr_a == pytest.approx(lr_b) and [tuple(b) for b in b_a] == pytest.approx([tuple(b) for b in b_b])


def test_step_with_epoch_uses_the_closed_form():
    for lib in (loom, torch):
        opt = lib.optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=1.0)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(5)
        assert sched.get_last_lr() == [0.25]


def test_scheduler_state_dict_resumes():
    _, sched = _lrs(loom, SCHEDULERS["CosineAnnealingLR"], 5)
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 5 and state["base_lrs"] == pytest.approx([0.1, 0.2])
    opt = optim.SGD([loom.tensor([1.0], requires_grad=True)] * 1, lr=0.1)
    opt.add_param_group({"params": [loom.tensor([1.0], requires_grad=True)], "lr": 0.2})
    resumed = lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.001)
    resumed.load_state_dict(state)
    for g, lr in zip(opt.param_groups, sched.get_last_lr()):
        g["lr"] = lr
    sched.step()
    resumed.step()
    assert resumed.get_last_lr() == pytest.approx(sched.get_last_lr())


def test_scheduler_errors():
    opt = optim.SGD([loom.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR("sgd", 1)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(opt, 1, last_epoch=3)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()
    assert math.isfinite(sched.get_last_lr()[0])
