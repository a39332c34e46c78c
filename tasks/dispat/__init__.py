"""dispat task package (see README.md)."""
