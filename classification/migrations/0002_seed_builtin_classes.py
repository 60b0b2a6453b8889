"""Seed the 13 built-in data classes (SPEC's ten and DECISIONS §5's three)."""
from django.db import migrations

BUILTINS = [
    # className, shortName, severity
    ("email", "Email", "MEDIUM"),
    ("ssn", "Social Security Number", "HIGH"),
    ("credit_card", "Credit Card Number", "HIGH"),
    ("phone_number", "Phone Number", "MEDIUM"),
    ("ip_address", "IP Address", "LOW"),
    ("driver_license", "Driver License Number", "HIGH"),
    ("dob", "Date of Birth", "MEDIUM"),
    ("address", "Address", "MEDIUM"),
    ("api_key", "API Key", "HIGH"),
    ("authentication_token", "Authentication Token", "HIGH"),
    ("passport_number", "Passport Number", "HIGH"),
    ("mac_address", "MAC Address", "LOW"),
    ("user_id", "User ID", "LOW"),
]


def seed(apps, schema_editor):
    DataClass = apps.get_model("classification", "DataClass")
    for name, short_name, severity in BUILTINS:
        DataClass.objects.update_or_create(
            name=name, defaults={"short_name": short_name, "severity": severity, "builtin": True}
        )


def unseed(apps, schema_editor):
    apps.get_model("classification", "DataClass").objects.filter(builtin=True).delete()


class Migration(migrations.Migration):
    dependencies = [("classification", "0001_initial")]
    operations = [migrations.RunPython(seed, unseed)]
