"""Small pieces shared by the judge and the candidate host."""
import importlib.machinery
import importlib.util
import os
import sys


def parse_fd():
    return int(sys.argv[sys.argv.index("--fd") + 1])


def load_extension(path, module_name):
    """Import a compiled extension module from an exact file (never by search path)."""
    loader = importlib.machinery.ExtensionFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def as_list(out):
    """A forward's result as a list of values (a tensor, a tuple or a list of them)."""
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def device_sync(device):
    import torch
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def redirect_output(path):
    """Send this process's stdout and stderr to a file: the channel is the only voice."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
