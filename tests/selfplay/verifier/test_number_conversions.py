"""A program object becomes a number the way numeric classes are tested (`float(r)`,
`int(r)`, `round(r)`, `xs[r]`, `abs(v)`): the program converts its own object and the number
comes back as data. Never for an object computed from test data, never with test-given
digits, and never into anything but a number."""

from __future__ import annotations

PROGRAM = """
import math
class Rational:
    def __init__(self, n, d):
        g = math.gcd(n, d)
        self.n, self.d = n // g, d // g
    def __float__(self):
        return self.n / self.d
    def __int__(self):
        return self.n // self.d
    def __index__(self):
        return self.n // self.d
    def __round__(self, nd=None):
        return round(self.n / self.d) if nd is None else round(self.n / self.d, nd)
    def __eq__(self, other):
        return True
class Liar:
    def __float__(self):
        return Liar()
class Vector:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __mul__(self, k):
        return Vector(self.x * k, self.y * k)
    def __abs__(self):
        return math.hypot(self.x, self.y)
"""
LEGITIMATE = {
    "float": "assert float(Rational(1, 2)) == 0.5",
    "index": "assert [10, 20, 30][Rational(4, 2)] == 30",
    "int_round": "assert int(Rational(7, 2)) == 3 and round(Rational(7, 2)) == 4",
    "floor": "import math\nassert math.floor(Rational(7, 2)) == 3",
    "abs": "assert abs(Vector(3, 4)) == 5.0",
}
REFUSED = {
    "round_digits": "assert round(Rational(1, 3), 2) == 0.33",  # would hand the program 2
    "equals_data": "assert Rational(4, 2) == 5",  # its __eq__ would see 5
    "marked": "assert abs(Vector(3, 4) * 2) == 10.0",  # computed from the test's 2
    "not_a_number": "float(Liar())",
}


def test_numeric_classes_convert_and_the_refusals_hold(verifier):
    rows = [
        {"id": k, "program": PROGRAM, "tests": [t]} for k, t in {**LEGITIMATE, **REFUSED}.items()
    ]
    verdicts = {v.id: v for v in verifier.grade(rows)}
    for name in LEGITIMATE:
        assert verdicts[name].passed, (name, verdicts[name].detail)
    for name in REFUSED:
        assert not verdicts[name].passed, name
    assert all("handle_compared" in verdicts[n].signals for n in ("round_digits", "marked"))
