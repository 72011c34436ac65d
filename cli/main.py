import sys


def main(argv=None):
    print("hallubench", argv or sys.argv[1:])
