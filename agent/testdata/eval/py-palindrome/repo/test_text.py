import unittest

from text import initials, is_palindrome, word_count


class TextTest(unittest.TestCase):
    def test_palindrome(self):
        self.assertTrue(is_palindrome("Never odd or even"))
        self.assertFalse(is_palindrome("statewright"))

    def test_word_count(self):
        self.assertEqual(word_count("  a b\tc "), 3)

    def test_initials(self):
        self.assertEqual(initials("ada lovelace"), "AL")


if __name__ == "__main__":
    unittest.main()
