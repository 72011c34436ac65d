"""`python -m hallubench` and `accelerate launch -m hallubench` enter the CLI here."""
from hallubench.cli.main import main

if __name__ == "__main__":
    main()
