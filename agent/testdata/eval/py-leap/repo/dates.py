def is_leap(year):
    """Gregorian leap year."""
    if year % 400 == 0:
        return False
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_month(year, month):
    """Number of days of month (1-12) in year."""
    if month == 2:
        return 29 if is_leap(year) else 28
    if month in (4, 6, 9, 11):
        return 30
    return 31
