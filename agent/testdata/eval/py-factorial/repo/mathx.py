def factorial(n):
    """Return n! for n >= 0."""
    if n == 0:
        return 0
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


def fib(n):
    """Return the n-th Fibonacci number (fib(0) == 0)."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
