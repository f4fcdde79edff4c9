"""Check the CUDA examples on a GPU machine: python examples/check_cuda_examples.py [--all] [FILE ...]

Same checks as check_cpu_examples.py, with tensors and models on the current CUDA device.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_cpu_examples  # noqa: E402

if __name__ == "__main__":
    sys.argv[1:1] = ["--device", "cuda"]
    sys.exit(check_cpu_examples.main())
