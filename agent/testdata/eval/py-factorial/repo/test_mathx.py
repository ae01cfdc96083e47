import unittest

from mathx import factorial, fib


class MathTest(unittest.TestCase):
    def test_factorial(self):
        self.assertEqual(factorial(0), 1)
        self.assertEqual(factorial(5), 120)

    def test_fib(self):
        self.assertEqual([fib(i) for i in range(7)], [0, 1, 1, 2, 3, 5, 8])


if __name__ == "__main__":
    unittest.main()
