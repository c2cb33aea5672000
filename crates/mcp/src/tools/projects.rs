//! The project tool: the account's projects, for a credential that may list them.

use super::args::NoArgs;
use super::common::{Call, ToolError, refused};
use super::output::{ProjectItem, ProjectsOut};

pub(super) async fn list_projects(cx: &Call<'_>, _: NoArgs) -> Result<ProjectsOut, ToolError> {
    let projects = cx
        .state
        .projects
        .list(cx.principal())
        .await
        .map_err(refused)?;
    Ok(ProjectsOut {
        projects: projects
            .into_iter()
            .map(|p| ProjectItem {
                slug: p.slug.as_str().to_owned(),
                name: p.name,
                status: p.status.as_str().to_owned(),
            })
            .collect(),
    })
}
