def is_palindrome(s):
    """Report whether s reads the same backwards, ignoring case and spaces."""
    t = s.replace(" ", "")
    return t == t[::-1]


def word_count(s):
    """Count the whitespace-separated words of s."""
    return len(s.split())


def initials(name):
    """Return the upper-case initials of a name."""
    return "".join(w[0].upper() for w in name.split())
