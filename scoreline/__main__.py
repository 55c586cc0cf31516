from scoreline.cli import main

main()
