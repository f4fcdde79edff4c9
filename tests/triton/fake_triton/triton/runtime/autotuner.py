"""triton.autotune / heuristics / Config of the CPU stand-in: the autotuner times every
configuration once per key (Autotuner._bench, the method kforge's hooks scope), keeps the
fastest, and runs a call's chosen configuration with its pre_hook first."""
import time

from .jit import KernelInterface


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=2, num_ctas=1, pre_hook=None, **_):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.pre_hook = pre_hook


class Autotuner(KernelInterface):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, **_):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = configs
        self.keys = key
        self.post_hook = post_hook
        self.cache = {}

    def _args(self, args, kwargs):
        values = dict(zip(self.arg_names, args))
        values.update(kwargs)
        return values

    def _call(self, config, args, kwargs):
        values = self._args(args, kwargs)
        values.update(config.kwargs)
        if config.pre_hook is not None:
            config.pre_hook(values)
        out = self.fn.run(*args, **kwargs, **config.kwargs)
        if self.post_hook is not None:
            self.post_hook(values, exception=None)
        return out

    def _bench(self, *args, config, **kwargs):
        t0 = time.perf_counter()
        self._call(config, args, kwargs)
        return time.perf_counter() - t0

    def run(self, *args, **kwargs):
        values = self._args(args, kwargs)
        key = tuple(values.get(k) for k in self.keys)
        if key not in self.cache:
            timings = {i: self._bench(*args, config=c, **kwargs) for i, c in enumerate(self.configs)}
            self.cache[key] = self.configs[min(timings, key=timings.get)]
        return self._call(self.cache[key], args, kwargs)


class Heuristics(KernelInterface):
    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values

    def run(self, *args, **kwargs):
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule(named)
        return self.fn.run(*args, **kwargs)


def autotune(configs, key, **options):
    return lambda fn: Autotuner(fn, fn.arg_names, configs, key, **options)


def heuristics(values):
    return lambda fn: Heuristics(fn, fn.arg_names, values)
