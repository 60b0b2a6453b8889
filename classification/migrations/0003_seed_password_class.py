"""Seed the built-in ``password`` data class (DECISIONS §5: HIGH, "Password or secret")."""
from django.db import migrations


def seed(apps, schema_editor):
    DataClass = apps.get_model("classification", "DataClass")
    DataClass.objects.update_or_create(
        name="password", defaults={"short_name": "Password or secret", "severity": "HIGH", "builtin": True}
    )


def unseed(apps, schema_editor):
    apps.get_model("classification", "DataClass").objects.filter(name="password", builtin=True).delete()


class Migration(migrations.Migration):
    dependencies = [("classification", "0002_seed_builtin_classes")]
    operations = [migrations.RunPython(seed, unseed)]
