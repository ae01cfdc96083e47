import pytest

def test_pass():
    pass

def test_fail():
    print("1 passed in 0.01s")
    assert 1 == 2

@pytest.mark.skip(reason="not today")
def test_skip():
    pass
