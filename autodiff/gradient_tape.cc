// gradient tape: to be implemented
