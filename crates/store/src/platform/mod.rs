//! The platform an account builds on: `ProjectStore` (`projects`, with a project's row in
//! `project_rows`, moving a resource in `project_assign` and listing them in
//! `project_resources`), `KeyStore` (`keys`) and `DatabaseRecords` (`databases`).

pub(crate) mod databases;
pub(crate) mod keys;
mod project_assign;
mod project_resources;
mod project_rows;
pub(crate) mod projects;
