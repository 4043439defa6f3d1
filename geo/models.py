"""Saved point lookups made by staff in the admin (the MCP tool itself keeps no rows)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Granularity(models.TextChoices):
    ADMIN = "admin", _("admin (administrative areas, /raacs)")
    ESTAT = "estat", _("estat (census small areas, /resareas)")
    JARL = "jarl", _("jarl (JCC/JCG, /rjccs)")


class PointLookup(models.Model):
    """One resolve_points run from the admin: the points sent and either the results or the error."""

    name = models.CharField(_("name"), max_length=100, blank=True)
    granularity = models.CharField(
        _("granularity"), max_length=5, choices=Granularity.choices, default=Granularity.ADMIN
    )
    points = models.JSONField(_("points"), default=list, help_text=_("The request's points: [{ref?, lat, lon}]."))
    point_count = models.PositiveIntegerField(_("points"), default=0)
    results = models.JSONField(_("results"), null=True, blank=True, help_text=_("The seed's results, one per point."))
    error = models.JSONField(
        _("error"), null=True, blank=True, help_text=_("The seed's error {code, message, location?}.")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("point lookup")
        verbose_name_plural = _("point lookups")
        constraints = [
            models.CheckConstraint(
                condition=Q(granularity__in=Granularity.values), name="geo_pointlookup_granularity_valid"
            ),
            # The seed never returns results together with an error.
            models.CheckConstraint(
                condition=Q(results__isnull=True) | Q(error__isnull=True), name="geo_pointlookup_results_xor_error"
            ),
        ]

    def __str__(self) -> str:
        return self.name or _("Lookup #%(pk)s (%(count)s points, %(granularity)s)") % {
            "pk": self.pk,
            "count": self.point_count,
            "granularity": self.granularity,
        }

    @property
    def outcome(self) -> str:
        if self.error:
            return self.error.get("code", "ERROR")
        return "OK" if self.results is not None else "PENDING"
