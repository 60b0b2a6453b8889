from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("testgen", "0002_test_runs"),
    ]

    operations = [
        migrations.AddField(
            model_name="testingenvironment",
            name="identities_encrypted",
            field=models.TextField(blank=True, default="", editable=False),
        ),
    ]
