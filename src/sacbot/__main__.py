from sacbot.cli.main import run

run()
