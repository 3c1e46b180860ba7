// See ../build/commit.rs.
include!("../build/commit.rs");
