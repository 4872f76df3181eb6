//! The client's operations role: what operators and applications ask of jobs beyond running
//! them. Reading jobs and moving them out of the active states (`jobs`), the same for every job
//! a filter selects (`bulk`), a job's attempts (`attempts`), queries by key, state and time
//! (`queries`), paused queues (`queues`), registered workers (`workers`), declared schedules
//! (`schedules`), rate limits (`rate_limits`) and grants to other roles (`grants`).

pub mod attempts;
pub mod bulk;
pub mod grants;
pub mod jobs;
pub mod queries;
pub mod queues;
pub mod rate_limits;
pub mod schedules;
pub mod workers;

use std::sync::Arc;

use crate::pool::Pool;
use crate::schema::Schema;

/// The client's operations role.
pub struct Operations {
    pool: Arc<Pool>,
    schema: Schema,
    sql: Statements,
}

/// The operations' statements, with the schema filled in once.
struct Statements {
    get_job: String,
    find_by_key: String,
    /// `list_jobs.sql` for each combination of filters (see [`ListStatements`]).
    list_jobs: ListStatements,
    /// The bulk actions' statements, each for every combination of filters.
    bulk: bulk::BulkStatements,
    throughput: String,
    get_payload: String,
    count_jobs: String,
    finish_job: String,
    purge: String,
    expire_keys: String,
    redrive: String,
    set_rate_limit: String,
    remove_rate_limit: String,
    pause_queue: String,
    resume_queue: String,
    paused_queues: String,
    list_workers: String,
    list_attempts: String,
    declare_schedule: String,
    list_schedules: String,
    pause_schedule: String,
    trigger_schedule: String,
    set_grantee: String,
    grant_producer: String,
    grant_worker: String,
}

/// A statement that reads jobs as operators see them: `{job_columns}` filled in.
fn job_statement(s: &Schema, template: &str) -> String {
    s.statement(&template.replace("{job_columns}", include_str!("../../sql/job_columns.sql")))
}

/// A statement by filter: none, by queue ($3), by task ($4), by both. Each is a text of its
/// own, so that each gets a plan of its own, with the index its filters call for.
struct ListStatements {
    texts: [String; 4],
}

impl ListStatements {
    /// `template` with `{filters}` filled in each way, then made a statement by `finish`.
    fn by_filters(template: &str, finish: impl Fn(&str) -> String) -> ListStatements {
        let text = |filters: &str| finish(&template.replace("{filters}", filters));
        ListStatements {
            texts: [
                text(""),
                text("AND j.queue = $3"),
                text("AND j.task = $4"),
                text("AND j.queue = $3 AND j.task = $4"),
            ],
        }
    }

    fn for_schema(s: &Schema) -> ListStatements {
        Self::by_filters(include_str!("../../sql/list_jobs.sql"), |t| {
            job_statement(s, t)
        })
    }

    /// The statement for these filters.
    fn get(&self, by_queue: bool, by_task: bool) -> &str {
        &self.texts[usize::from(by_queue) + 2 * usize::from(by_task)]
    }
}

impl Operations {
    pub(crate) fn new(pool: Arc<Pool>, s: &Schema) -> Operations {
        Operations {
            pool,
            schema: s.clone(),
            sql: Statements {
                get_job: job_statement(s, include_str!("../../sql/get_job.sql")),
                find_by_key: job_statement(s, include_str!("../../sql/find_by_key.sql")),
                list_jobs: ListStatements::for_schema(s),
                bulk: bulk::BulkStatements::for_schema(s),
                throughput: s.statement(include_str!("../../sql/throughput.sql")),
                get_payload: s.statement(include_str!("../../sql/get_payload.sql")),
                count_jobs: s.statement(include_str!("../../sql/count_jobs.sql")),
                finish_job: s.statement(include_str!("../../sql/finish_job.sql")),
                purge: s.statement(include_str!("../../sql/purge.sql")),
                expire_keys: s.statement(include_str!("../../sql/expire_keys.sql")),
                redrive: s.statement(include_str!("../../sql/redrive_job.sql")),
                set_rate_limit: s.statement(include_str!("../../sql/set_rate_limit.sql")),
                remove_rate_limit: s.statement(include_str!("../../sql/remove_rate_limit.sql")),
                pause_queue: s.statement(include_str!("../../sql/pause_queue.sql")),
                resume_queue: s.statement(include_str!("../../sql/resume_queue.sql")),
                paused_queues: s.statement(include_str!("../../sql/paused_queues.sql")),
                list_workers: s.statement(include_str!("../../sql/list_workers.sql")),
                list_attempts: s.statement(include_str!("../../sql/list_attempts.sql")),
                declare_schedule: s.statement(include_str!("../../sql/declare_schedule.sql")),
                list_schedules: s.statement(include_str!("../../sql/list_schedules.sql")),
                pause_schedule: s.statement(include_str!("../../sql/pause_schedule.sql")),
                trigger_schedule: s.statement(include_str!("../../sql/trigger_schedule.sql")),
                set_grantee: s.statement(include_str!("../../sql/set_grantee.sql")),
                grant_producer: s.statement(include_str!("../../sql/grant_producer.sql")),
                grant_worker: s.statement(include_str!("../../sql/grant_worker.sql")),
            },
        }
    }
}
