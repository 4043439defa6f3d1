# The staff's Japanese date and time style (mcpsite/formats/__init__.py); "D" is the weekday, 土.
DATE_FORMAT = "Y年n月j日(D)"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "Y年n月j日(D) H:i"
YEAR_MONTH_FORMAT = "Y年n月"
MONTH_DAY_FORMAT = "n月j日(D)"
