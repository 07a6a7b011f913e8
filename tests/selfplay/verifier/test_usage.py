"""`Verifier.usage()`: what the rows' processes and the zygotes cost, counted by the zygotes."""

from selfplay.verifier import Verifier

ROW = {"program": "def f(x):\n    return x * 2\n", "tests": ["assert f(2) == 4"]}
BUSY = {
    "program": "def f(x):\n    return sum(range(3_000_000)) * 0 + x * 2\n",
    "tests": ROW["tests"],
}


def test_usage_counts_each_role_and_grows_with_the_work():
    with Verifier(workers=1) as v:
        v.grade([{"id": str(i), **ROW} for i in range(10)])
        light = v.usage()
        v.grade([{"id": str(i), **BUSY} for i in range(10)])
        heavy = v.usage()
    for role in ("test", "solution", "zygote"):
        assert light[role]["cpu_s"] > 0 and light[role]["faults"] > 0, (role, light)
    # The busy rows' extra work is the program's: it shows in the solution processes.
    extra = {role: heavy[role]["cpu_s"] - light[role]["cpu_s"] for role in light}
    assert extra["solution"] > 3 * light["solution"]["cpu_s"], (extra, light)
    assert extra["solution"] > 2 * extra["test"], extra
