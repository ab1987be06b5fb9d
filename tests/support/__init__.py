"""Helpers only the tests use: option and record builders, stateful sessions, the crash driver.

What users and benchmarks need too (the transcript builder, the fleet generator, the fuzzer, the
provider server) stays in `pipeline.testing`.
"""
