"""The warm test runner that runs *inside* the sandbox (never on the host), one module per part:

- :mod:`.values`: what the differential oracle observes about a call, and values as test code;
- :mod:`.swap`: swapping a variant (new file contents) into the warm process;
- :mod:`.glue`: pytest statuses and the plugin; :mod:`.main`: the entry point;
- :mod:`.plan` and :mod:`.child`: the jobs in order, each in a forked child under a limit;
- the jobs: :mod:`.job_tests` (run tests, per-test coverage), :mod:`.job_differential` (a
  reference and a variant on the same Hypothesis inputs; the first shrunk disagreement becomes a
  regression test), :mod:`.job_explore` (characterisation tests of the reference, over the
  declared domain or over near inputs, :mod:`.near`),
  :mod:`.job_foreign` (the reference's rejections of foreign inputs, :mod:`.foreign`);
- :mod:`.calls`: the instance's call spec as the generators drive it.

The sandbox receives the package as one zip archive (``RUNNER_SOURCE``, written as
``runner.py``; Python runs a zip file's ``__main__.py``): ``python3 runner.py plan.json``. Only
the standard library, pytest, coverage and Hypothesis are needed (the sandbox's package folder).
Relative imports only, so the package runs under any name.
"""
