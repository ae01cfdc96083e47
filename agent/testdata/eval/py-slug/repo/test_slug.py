import unittest

from slug import slugify, title_case


class SlugTest(unittest.TestCase):
    def test_slugify(self):
        self.assertEqual(slugify("Hello, World 2!"), "hello-world-2")

    def test_title_case(self):
        self.assertEqual(title_case("states are laws"), "States Are Laws")


if __name__ == "__main__":
    unittest.main()
