"""`python -m training.bench_learning --minutes 20 --games 50`: the documented entry point of the
learning benchmark, whose code is training/measure/learning.py (see its docstring for the options)."""

from training.measure.learning import main

if __name__ == "__main__":
    main()
