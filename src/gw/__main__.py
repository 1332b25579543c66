from gw.cli.gw import main

main()
