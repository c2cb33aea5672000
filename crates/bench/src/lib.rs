//! `quire-bench`: benchmark programs (not tests). Each starts the real `quire-server`
//! release binary, measures it and a reference in the same run, and prints both with their
//! ratio. It depends on no Quire crate: it speaks HTTP only.
