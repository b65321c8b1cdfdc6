"""The ``optframe`` command line."""
