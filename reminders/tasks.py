"""Background work, run by django-tasks-db's `db_worker` (see docs/apps/reminders.md: `manage.py db_worker`)."""

from __future__ import annotations

from django.tasks import task

from . import services


@task()
def deliver_message(message_id: int) -> str | None:
    """Send one stored message by its channel and record sent/failed."""
    return services.message_deliver(message_id=message_id)


@task(takes_context=True)
def deliver_due_reminders(context) -> dict:
    """Deliver every due reminder, and re-enqueue messages a dead worker left behind."""
    worker_ids = context.task_result.worker_ids
    worker = worker_ids[-1] if worker_ids else "worker"
    return {
        "reminders": services.reminders_deliver_due(worker=worker),
        "messages_requeued": services.messages_requeue_stalled(),
    }
