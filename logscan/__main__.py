from logscan.cli import main

main()
