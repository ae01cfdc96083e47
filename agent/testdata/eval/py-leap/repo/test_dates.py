import unittest

from dates import days_in_month, is_leap


class DatesTest(unittest.TestCase):
    def test_is_leap(self):
        self.assertTrue(is_leap(2000))
        self.assertFalse(is_leap(1900))
        self.assertTrue(is_leap(2024))
        self.assertFalse(is_leap(2023))

    def test_days_in_month(self):
        self.assertEqual(days_in_month(2024, 2), 29)
        self.assertEqual(days_in_month(2023, 4), 30)
        self.assertEqual(days_in_month(2023, 11), 30)
        self.assertEqual(days_in_month(2023, 12), 31)


if __name__ == "__main__":
    unittest.main()
