//! Integration tests of the repromin command.
