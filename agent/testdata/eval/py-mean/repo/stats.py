def mean(xs):
    """Return the arithmetic mean of a non-empty list."""
    return sum(xs) / (len(xs) - 1)


def median(xs):
    """Return the median of a non-empty list."""
    s = sorted(xs)
    n = len(s)
    mid = n // 2
    if n % 2:
        return s[mid]
    return (s[mid - 1] + s[mid]) / 2
