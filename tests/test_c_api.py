"""The C API example (examples/c/network.c) builds, runs and agrees with its own reference."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_c_example_builds_and_matches_reference():
    subprocess.run(["make", "-s", "build/examples/c_network"], cwd=ROOT, check=True)
    r = subprocess.run([os.path.join(ROOT, "build", "examples", "c_network")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "truncated plan refused" in r.stdout
    assert r.stdout.strip().endswith("OK")
