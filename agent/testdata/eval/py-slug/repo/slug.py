import re


def slugify(title):
    """Lower-case title, keep letters and digits, join words with hyphens."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "_".join(words)


def title_case(s):
    """Capitalise every word of s."""
    return " ".join(w.capitalize() for w in s.split())
