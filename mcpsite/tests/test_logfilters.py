"""Calendar feed tokens never reach a log line, whatever path under /calendar/ carried them."""

import logging

import pytest

from mcpsite.logfilters import RedactFeedTokens, redact

TOKEN = "feedsecret0123456789abcdef"


@pytest.mark.parametrize(
    "path",
    [
        f"/calendar/{TOKEN}.ics",
        f"/calendar/{TOKEN}",
        f"/calendar/{TOKEN}.ICS",
        f"/calendar/./{TOKEN}.ics",
        f"/calendar/x/../{TOKEN}.ics",
        f"/calendar//{TOKEN}",
        f"/calendar/{TOKEN}.ics?x=1",
        f"/CALENDAR/{TOKEN}.ics",
        f"/calendar%2F{TOKEN}.ics",
        f"/calendar%2f{TOKEN}",
    ],
)
def test_any_path_under_calendar_is_redacted(path):
    line = redact(f'127.0.0.1:5000 - "GET {path} HTTP/1.1" 404')
    assert TOKEN not in line
    assert "/calendar" in line.lower() and "[redacted]" in line
    assert line.endswith(' HTTP/1.1" 404')  # the rest of the line is kept


def test_the_filter_redacts_the_message_and_its_arguments():
    args = ("GET", f"/calendar/{TOKEN}")
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "%s - %s", args, None)
    RedactFeedTokens().filter(record)
    assert TOKEN not in record.getMessage()
    assert record.getMessage() == "GET - /calendar/[redacted]"


def test_other_paths_are_left_alone():
    assert redact("GET /calendars/list 200") == "GET /calendars/list 200"
    assert redact("GET /admin/reminders/calendar 200") == "GET /admin/reminders/calendar 200"


@pytest.mark.django_db
def test_a_403_is_logged_at_warning_without_a_traceback(client, django_user_model):
    """The console handler's filters drop the traceback Django attaches to a refused page, and only to that."""
    import io
    import logging.config

    from django.conf import settings

    stream = io.StringIO()
    config = {
        **settings.LOGGING,
        "handlers": {"console": {**settings.LOGGING["handlers"]["console"], "stream": stream}},
    }
    config["handlers"]["console"].pop("formatter", None)
    logging.config.dictConfig(config)
    try:
        client.force_login(django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True))
        assert client.get("/admin/cinema/schedule/").status_code == 403
    finally:
        logging.config.dictConfig(settings.LOGGING)
    text = stream.getvalue()
    assert "Forbidden" in text and "/admin/cinema/schedule/" in text and "Traceback" not in text
